package io.github.idempotent.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.util.unit.DataSize;

/**
 * HTTP endpoints, under {@code idempotent.web}.
 */
public class IdempotentWebProperties {

	/**
	 * Request header that carries the idempotency key when the annotation has no key
	 * expression.
	 */
	private String headerName = "Idempotency-Key";

	/**
	 * Response header that marks a replayed response (with the value "true").
	 */
	private String replayedHeader = "Idempotent-Replayed";

	/**
	 * Whether the protocol's exceptions are mapped to problem responses (400, 409, 422,
	 * 503).
	 */
	private boolean problemDetails = true;

	/**
	 * Response headers never stored with a ResponseEntity result nor replayed, besides
	 * the credential headers that are never stored (Set-Cookie, Authorization,
	 * WWW-Authenticate and their proxy counterparts, X-Auth-Token, X-API-Key,
	 * X-Access-Token, X-Refresh-Token, X-ID-Token, X-CSRF-TOKEN, X-XSRF-TOKEN) and
	 * hop-by-hop headers.
	 */
	private List<String> excludedResponseHeaders = new ArrayList<>();

	/**
	 * Response headers stored with a response and replayed, when not empty: an
	 * allow-list, for APIs whose handlers may set headers that must not reach whoever
	 * sends the key again. Credential, hop-by-hop and excluded headers are never stored
	 * even when listed; Content-Type is always kept.
	 */
	private List<String> replayedResponseHeaders = new ArrayList<>();

	/**
	 * Largest body of a request to an idempotent handler method: it is read whole to
	 * fingerprint it, so a larger one is refused with 413 before any store work.
	 */
	private DataSize maxRequestSize = DataSize.ofMegabytes(1);

	/**
	 * Statuses of an idempotent handler's response that release its key instead of being
	 * stored, so that a retry with the same key runs the handler again: error statuses
	 * ("503"), classes ("4xx", "5xx"), or "none" to store every response. An annotation's
	 * releaseOnStatus overrides it.
	 */
	private List<String> releaseOnStatus = new ArrayList<>(List.of("429", "5xx"));

	public List<String> getReleaseOnStatus() {
		return this.releaseOnStatus;
	}

	public void setReleaseOnStatus(List<String> releaseOnStatus) {
		this.releaseOnStatus = releaseOnStatus;
	}

	/**
	 * Requests guarded without @Idempotent, the key from the request header; the first
	 * route that matches a request applies, and a handler's own @Idempotent wins.
	 */
	private List<Route> routes = new ArrayList<>();

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

	/**
	 * The headers never stored with a response: the configured ones, the replay marker
	 * and the key echo, which each response sets anew.
	 */
	List<String> notStoredResponseHeaders() {
		List<String> excluded = new ArrayList<>(this.excludedResponseHeaders);
		excluded.add(this.replayedHeader);
		excluded.add(this.headerName);
		return excluded;
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

	/**
	 * Requests guarded by configuration, as if their handler method carried @Idempotent.
	 */
	public static class Route {

		/**
		 * Path patterns of the requests guarded, as request mappings write them (/api/**,
		 * /orders/{id}).
		 */
		private List<String> paths = new ArrayList<>();

		/**
		 * Path patterns of requests that the paths match but that are not guarded.
		 */
		private List<String> excludePaths = new ArrayList<>();

		/**
		 * HTTP methods of the requests guarded.
		 */
		private List<String> methods = new ArrayList<>(List.of("POST", "PUT", "PATCH"));

		/**
		 * Whether a request without a key is refused with 400. When false, it runs
		 * unguarded.
		 */
		private boolean required;

		/**
		 * How long a completed response is replayed. Default: idempotent.ttl.
		 */
		private @Nullable Duration ttl;

		/**
		 * How long the record of a call in progress lives without renewal. Default:
		 * idempotent.lease.
		 */
		private @Nullable Duration lease;

		/**
		 * How long one call may hold its key. Default: idempotent.max-duration.
		 */
		private @Nullable Duration maxDuration;

		/**
		 * How long a duplicate waits for the first call to finish before it gets 409.
		 * Default: idempotent.wait-for.
		 */
		private @Nullable Duration waitFor;

		/**
		 * Retry-After suggested with a 409. Default: idempotent.retry-after.
		 */
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
