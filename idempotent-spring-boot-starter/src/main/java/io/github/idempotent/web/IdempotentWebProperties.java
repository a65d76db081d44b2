package io.github.idempotent.web;

import java.time.Duration;
import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

/**
 * HTTP endpoints, under {@code idempotent.web}. Binds without Spring Web: the core reads
 * {@code release-on-status} in any application.
 *
 * @param headerName Request header that carries the key when the annotation has no key
 * expression.
 * @param replayedHeader Response header that marks a replayed response (with the value
 * "true").
 * @param problemDetails Whether the protocol's exceptions are mapped to problem
 * responses.
 * @param excludedResponseHeaders Response headers never stored nor replayed, besides the
 * credential and hop-by-hop headers, which never are.
 * @param replayedResponseHeaders Allow-list of response headers stored and replayed, when
 * not empty; Content-Type is always kept.
 * @param maxRequestSize Largest request body of an idempotent handler, read whole to
 * fingerprint it; larger is 413.
 * @param releaseOnStatus Statuses that release the key instead of being stored: "503",
 * "4xx", "5xx", or "none" to store every response.
 * @param routes Requests guarded without @Idempotent; the first route that matches
 * applies.
 */
@ConfigurationProperties("idempotent.web")
public record IdempotentWebProperties(@DefaultValue("Idempotency-Key") String headerName,
		@DefaultValue("Idempotent-Replayed") String replayedHeader, @DefaultValue("true") boolean problemDetails,
		@DefaultValue List<String> excludedResponseHeaders, @DefaultValue List<String> replayedResponseHeaders,
		@DefaultValue("1MB") DataSize maxRequestSize, @DefaultValue( {
				"429", "5xx" }) List<String> releaseOnStatus,
		@DefaultValue List<Route> routes){

	/**
	 * Requests guarded by configuration, as if their handler carried @Idempotent.
	 *
	 * @param paths Path patterns of the requests guarded (/api/**, /orders/{id}).
	 * @param excludePaths Path patterns the paths match that are not guarded.
	 * @param methods HTTP methods of the requests guarded.
	 * @param required Whether a request without a key is refused with 400; else it runs
	 * unguarded.
	 * @param ttl How long a completed response is replayed. Default: idempotent.ttl.
	 * @param lease Lease of a call in progress. Default: idempotent.lease.
	 * @param maxDuration How long one call may hold its key. Default:
	 * idempotent.max-duration.
	 * @param waitFor How long a duplicate waits before it gets 409. Default:
	 * idempotent.wait-for.
	 * @param retryAfter Retry-After suggested with a 409. Default:
	 * idempotent.retry-after.
	 */
	public record Route(@DefaultValue List<String> paths, @DefaultValue List<String> excludePaths, @DefaultValue( {
			"POST", "PUT", "PATCH" }) List<String> methods, boolean required, @Nullable Duration ttl,
			@Nullable Duration lease, @Nullable Duration maxDuration, @Nullable Duration waitFor,
			@Nullable Duration retryAfter){

	}

}
