package io.github.idempotent.web;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.util.unit.DataSize;

/**
 * HTTP endpoints, under {@code idempotent.web}. Binds without Spring Web: the core reads
 * {@code release-on-status} in any application.
 */
@ConfigurationProperties("idempotent.web")
public class IdempotentWebProperties {

	/** Request header that carries the key when the annotation has no key expression. */
	private String headerName = "Idempotency-Key";

	/** Response header that marks a replayed response (with the value "true"). */
	private String replayedHeader = "Idempotent-Replayed";

	/** Whether the protocol's exceptions are mapped to problem responses. */
	private boolean problemDetails = true;

	/**
	 * Response headers never stored nor replayed, besides the credential and hop-by-hop
	 * headers, which never are.
	 */
	private List<String> excludedResponseHeaders = new ArrayList<>();

	/**
	 * Allow-list of response headers stored and replayed, when not empty; Content-Type is
	 * always kept.
	 */
	private List<String> replayedResponseHeaders = new ArrayList<>();

	/**
	 * Largest request body of an idempotent handler, read whole to fingerprint it; larger
	 * is 413.
	 */
	private DataSize maxRequestSize = DataSize.ofMegabytes(1);

	/**
	 * Statuses that release the key instead of being stored: "503", "4xx", "5xx", or
	 * "none" to store every response.
	 */
	private List<String> releaseOnStatus = new ArrayList<>(List.of("429", "5xx"));

	/** Requests guarded without @Idempotent; the first route that matches applies. */
	private List<Route> routes = new ArrayList<>();

	public List<String> getReleaseOnStatus() {
		return this.releaseOnStatus;
	}

	public void setReleaseOnStatus(List<String> releaseOnStatus) {
		this.releaseOnStatus = releaseOnStatus;
	}

	public List<Route> getRoutes() {
		return this.routes;
	}

	public void setRoutes(List<Route> routes) {
		this.routes = routes;
	}

	public DataSize getMaxRequestSize() {
		return this.maxRequestSize;
	}

	public void setMaxRequestSize(DataSize maxRequestSize) {
		this.maxRequestSize = maxRequestSize;
	}

	public List<String> getReplayedResponseHeaders() {
		return this.replayedResponseHeaders;
	}

	public void setReplayedResponseHeaders(List<String> replayedResponseHeaders) {
		this.replayedResponseHeaders = replayedResponseHeaders;
	}

	public List<String> getExcludedResponseHeaders() {
		return this.excludedResponseHeaders;
	}

	public void setExcludedResponseHeaders(List<String> excludedResponseHeaders) {
		this.excludedResponseHeaders = excludedResponseHeaders;
	}

	public String getHeaderName() {
		return this.headerName;
	}

	public String getReplayedHeader() {
		return this.replayedHeader;
	}

	public void setReplayedHeader(String replayedHeader) {
		this.replayedHeader = replayedHeader;
	}

	public void setHeaderName(String headerName) {
		this.headerName = headerName;
	}

	public boolean isProblemDetails() {
		return this.problemDetails;
	}

	public void setProblemDetails(boolean problemDetails) {
		this.problemDetails = problemDetails;
	}

	/** Requests guarded by configuration, as if their handler carried @Idempotent. */
	public static class Route {

		/** Path patterns of the requests guarded (/api/**, /orders/{id}). */
		private List<String> paths = new ArrayList<>();

		/** Path patterns the paths match that are not guarded. */
		private List<String> excludePaths = new ArrayList<>();

		/** HTTP methods of the requests guarded. */
		private List<String> methods = new ArrayList<>(List.of("POST", "PUT", "PATCH"));

		/**
		 * Whether a request without a key is refused with 400; else it runs unguarded.
		 */
		private boolean required;

		/** How long a completed response is replayed. Default: idempotent.ttl. */
		private @Nullable Duration ttl;

		/** Lease of a call in progress. Default: idempotent.lease. */
		private @Nullable Duration lease;

		/** How long one call may hold its key. Default: idempotent.max-duration. */
		private @Nullable Duration maxDuration;

		/**
		 * How long a duplicate waits before it gets 409. Default: idempotent.wait-for.
		 */
		private @Nullable Duration waitFor;

		/** Retry-After suggested with a 409. Default: idempotent.retry-after. */
		private @Nullable Duration retryAfter;

		public List<String> getPaths() {
			return this.paths;
		}

		public void setPaths(List<String> paths) {
			this.paths = paths;
		}

		public List<String> getExcludePaths() {
			return this.excludePaths;
		}

		public void setExcludePaths(List<String> excludePaths) {
			this.excludePaths = excludePaths;
		}

		public List<String> getMethods() {
			return this.methods;
		}

		public void setMethods(List<String> methods) {
			this.methods = methods;
		}

		public boolean isRequired() {
			return this.required;
		}

		public void setRequired(boolean required) {
			this.required = required;
		}

		public @Nullable Duration getTtl() {
			return this.ttl;
		}

		public void setTtl(@Nullable Duration ttl) {
			this.ttl = ttl;
		}

		public @Nullable Duration getLease() {
			return this.lease;
		}

		public void setLease(@Nullable Duration lease) {
			this.lease = lease;
		}

		public @Nullable Duration getMaxDuration() {
			return this.maxDuration;
		}

		public void setMaxDuration(@Nullable Duration maxDuration) {
			this.maxDuration = maxDuration;
		}

		public @Nullable Duration getWaitFor() {
			return this.waitFor;
		}

		public void setWaitFor(@Nullable Duration waitFor) {
			this.waitFor = waitFor;
		}

		public @Nullable Duration getRetryAfter() {
			return this.retryAfter;
		}

		public void setRetryAfter(@Nullable Duration retryAfter) {
			this.retryAfter = retryAfter;
		}

	}

}
