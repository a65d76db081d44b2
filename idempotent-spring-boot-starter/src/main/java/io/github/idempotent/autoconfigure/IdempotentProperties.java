package io.github.idempotent.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.util.unit.DataSize;

import io.github.idempotent.core.FailureMode;

/**
 * Configuration of {@code @Idempotent}.
 */
@ConfigurationProperties("idempotent")
public class IdempotentProperties {

	/**
	 * Whether @Idempotent methods are guarded.
	 */
	private boolean enabled = true;

	/**
	 * Prefix of every record key in the store. Two applications that share a store and
	 * contain the same classes (two deployments of one code base) need different
	 * prefixes; every instance of one application needs the same one.
	 */
	private String keyPrefix = "idempotent";

	/**
	 * Time to keep and replay completed results.
	 */
	private Duration ttl = Duration.ofHours(24);

	/**
	 * Lease of an in-progress call, renewed every third of it while the method runs; a
	 * crashed instance blocks retries of its keys for at most this long.
	 */
	private Duration lease = Duration.ofSeconds(30);

	/**
	 * Longest time one call may hold its key, at least the lease: past it the lease is no
	 * longer renewed and the call's result is not stored, so a hung call frees its key.
	 * Longer than any client, gateway or broker timeout a request may wait behind.
	 */
	private Duration maxDuration = Duration.ofMinutes(10);

	/**
	 * Time a duplicate waits for the first call to finish before it is refused as in
	 * progress.
	 */
	private Duration waitFor = Duration.ZERO;

	/**
	 * Time a duplicate call of an @Async, @EventListener or @Scheduled method waits for
	 * the first call to finish when its annotation sets no waitFor; nobody retries such a
	 * call, so one still refused then is dropped with a warning. Unset, the operation's
	 * lease.
	 */
	private @Nullable Duration inProcessWaitFor;

	/**
	 * Delay suggested to refused duplicates and to callers refused while the store is
	 * down (HTTP Retry-After).
	 */
	private Duration retryAfter = Duration.ofSeconds(1);

	/**
	 * What to do when the store cannot be reached: refuse the call (closed) or run it
	 * unprotected (open).
	 */
	private FailureMode failureMode = FailureMode.CLOSED;

	/**
	 * Longest key a caller may send, in characters.
	 */
	private int maxKeyLength = 255;

	/**
	 * Largest encoded result that is stored.
	 */
	private DataSize maxResultSize = DataSize.ofMegabytes(1);

	/**
	 * Scope of keys when the annotation names none: the authenticated principal, or one
	 * scope shared by every caller.
	 */
	private DefaultScope defaultScope = DefaultScope.PRINCIPAL;

	private final ResultCompression resultCompression = new ResultCompression();

	private final Store store = new Store();

	private final Web web = new Web();

	private final Messaging messaging = new Messaging();

	private final LocalCache localCache = new LocalCache();

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public String getKeyPrefix() {
		return this.keyPrefix;
	}

	public void setKeyPrefix(String keyPrefix) {
		this.keyPrefix = keyPrefix;
	}

	public Duration getTtl() {
		return this.ttl;
	}

	public void setTtl(Duration ttl) {
		this.ttl = ttl;
	}

	public Duration getMaxDuration() {
		return this.maxDuration;
	}

	public void setMaxDuration(Duration maxDuration) {
		this.maxDuration = maxDuration;
	}

	public Duration getLease() {
		return this.lease;
	}

	public void setLease(Duration lease) {
		this.lease = lease;
	}

	public Duration getWaitFor() {
		return this.waitFor;
	}

	public void setWaitFor(Duration waitFor) {
		this.waitFor = waitFor;
	}

	public @Nullable Duration getInProcessWaitFor() {
		return this.inProcessWaitFor;
	}

	public void setInProcessWaitFor(@Nullable Duration inProcessWaitFor) {
		this.inProcessWaitFor = inProcessWaitFor;
	}

	public Duration getRetryAfter() {
		return this.retryAfter;
	}

	public void setRetryAfter(Duration retryAfter) {
		this.retryAfter = retryAfter;
	}

	public FailureMode getFailureMode() {
		return this.failureMode;
	}

	public void setFailureMode(FailureMode failureMode) {
		this.failureMode = failureMode;
	}

	public int getMaxKeyLength() {
		return this.maxKeyLength;
	}

	public void setMaxKeyLength(int maxKeyLength) {
		this.maxKeyLength = maxKeyLength;
	}

	public DataSize getMaxResultSize() {
		return this.maxResultSize;
	}

	public void setMaxResultSize(DataSize maxResultSize) {
		this.maxResultSize = maxResultSize;
	}

	public ResultCompression getResultCompression() {
		return this.resultCompression;
	}

	public DefaultScope getDefaultScope() {
		return this.defaultScope;
	}

	public void setDefaultScope(DefaultScope defaultScope) {
		this.defaultScope = defaultScope;
	}

	public Store getStore() {
		return this.store;
	}

	public Messaging getMessaging() {
		return this.messaging;
	}

	public Web getWeb() {
		return this.web;
	}

	public LocalCache getLocalCache() {
		return this.localCache;
	}

	/**
	 * Scope of keys when the annotation names none.
	 */
	public enum DefaultScope {

		/**
		 * The authenticated principal's name (Spring Security), else global.
		 */
		PRINCIPAL,

		/**
		 * One scope for every caller: keys must be unguessable and unique per client.
		 */
		GLOBAL

	}

	public static class ResultCompression {

		/**
		 * Whether results larger than the threshold are stored deflated. Compressed
		 * records are replayed whatever this setting.
		 */
		private boolean enabled = true;

		/**
		 * Size above which an encoded result is compressed; a number without a unit is
		 * bytes.
		 */
		private DataSize threshold = DataSize.ofBytes(256);

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public DataSize getThreshold() {
			return this.threshold;
		}

		public void setThreshold(DataSize threshold) {
			this.threshold = threshold;
		}

	}

	public static class Store {

		/**
		 * Store of idempotency records; auto picks Redis when a RedisConnectionFactory
		 * exists, else memory.
		 */
		private StoreType type = StoreType.AUTO;

		private final Redis redis = new Redis();

		private final Memory memory = new Memory();

		public StoreType getType() {
			return this.type;
		}

		public void setType(StoreType type) {
			this.type = type;
		}

		public Redis getRedis() {
			return this.redis;
		}

		public Memory getMemory() {
			return this.memory;
		}

	}

	public static class Memory {

		// A literal, not InMemoryIdempotencyStore.DEFAULT_MAXIMUM_RECORDS: the metadata
		// processor reads only literals, and IDEs show the default from the metadata.
		/**
		 * Largest number of records the in-memory store holds. When it is full and none
		 * has expired, new keys are refused as if the store were down (see failure-mode)
		 * rather than a live record evicted.
		 */
		private int maximumRecords = 100_000;

		public int getMaximumRecords() {
			return this.maximumRecords;
		}

		public void setMaximumRecords(int maximumRecords) {
			this.maximumRecords = maximumRecords;
		}

	}

	public static class Redis {

		/**
		 * Number of replicas that must acknowledge each claim and result (Redis WAIT)
		 * before the call goes on; 0 does not wait.
		 */
		private int waitReplicas;

		/**
		 * Longest wait for replica acknowledgements, after which the call goes on with a
		 * warning.
		 */
		private Duration waitTimeout = Duration.ofMillis(500);

		/**
		 * Whether the store starts on a Redis whose memory is bounded and whose
		 * maxmemory-policy may evict records (any but noeviction), accepting that a retry
		 * of an evicted key runs its method again.
		 */
		private boolean allowEvictingPolicy;

		public boolean isAllowEvictingPolicy() {
			return this.allowEvictingPolicy;
		}

		public void setAllowEvictingPolicy(boolean allowEvictingPolicy) {
			this.allowEvictingPolicy = allowEvictingPolicy;
		}

		public int getWaitReplicas() {
			return this.waitReplicas;
		}

		public void setWaitReplicas(int waitReplicas) {
			this.waitReplicas = waitReplicas;
		}

		public Duration getWaitTimeout() {
			return this.waitTimeout;
		}

		public void setWaitTimeout(Duration waitTimeout) {
			this.waitTimeout = waitTimeout;
		}

	}

	/**
	 * Kinds of store.
	 */
	public enum StoreType {

		/**
		 * Redis when a RedisConnectionFactory exists, else memory.
		 */
		AUTO,

		/**
		 * Redis, through the application's RedisConnectionFactory.
		 */
		REDIS,

		/**
		 * A relational table, through the application's DataSource.
		 */
		JDBC,

		/**
		 * This JVM's memory: one instance only.
		 */
		MEMORY

	}

	public static class Web {

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
		 * Whether the protocol's exceptions are mapped to problem responses (400, 409,
		 * 422, 503).
		 */
		private boolean problemDetails = true;

		/**
		 * Response headers never stored with a ResponseEntity result nor replayed,
		 * besides the credential headers that are never stored (Set-Cookie,
		 * Authorization, WWW-Authenticate and their proxy counterparts) and hop-by-hop
		 * headers.
		 */
		private List<String> excludedResponseHeaders = new ArrayList<>();

		/**
		 * Whether the response of an idempotent handler method is stored as it was
		 * written (status, headers, body bytes) and replayed byte for byte. When off, the
		 * method's return value is stored and encoded again on each replay, as versions
		 * before 0.6 did; turn it off for a rolling upgrade from those, whose instances
		 * cannot read a recorded response.
		 */
		private boolean recordResponses = true;

		public boolean isRecordResponses() {
			return this.recordResponses;
		}

		public void setRecordResponses(boolean recordResponses) {
			this.recordResponses = recordResponses;
		}

		/**
		 * The headers never stored with a response: the configured ones, the replay
		 * marker and the key echo, which each response sets anew.
		 */
		List<String> notStoredResponseHeaders() {
			List<String> excluded = new ArrayList<>(this.excludedResponseHeaders);
			excluded.add(this.replayedHeader);
			excluded.add(this.headerName);
			return excluded;
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

	}

	/**
	 * {@code @Idempotent} on RabbitMQ and Kafka listeners.
	 */
	public static class Messaging {

		/**
		 * Delay before a message that arrived while a duplicate of it was still being
		 * processed is redelivered.
		 */
		private Duration inProgressBackOff = Duration.ofSeconds(1);

		/**
		 * Kafka record header that carries the idempotency key; a record without it is
		 * keyed by its topic, partition, offset and timestamp.
		 */
		private String keyHeader = "Idempotency-Key";

		/**
		 * Whether messages sent with RabbitTemplate and KafkaTemplate get a key (AMQP
		 * message-id, Kafka key header) when they have none, once per send.
		 */
		private boolean stampOutgoing = true;

		public Duration getInProgressBackOff() {
			return this.inProgressBackOff;
		}

		public void setInProgressBackOff(Duration inProgressBackOff) {
			this.inProgressBackOff = inProgressBackOff;
		}

		public String getKeyHeader() {
			return this.keyHeader;
		}

		public void setKeyHeader(String keyHeader) {
			this.keyHeader = keyHeader;
		}

		public boolean isStampOutgoing() {
			return this.stampOutgoing;
		}

		public void setStampOutgoing(boolean stampOutgoing) {
			this.stampOutgoing = stampOutgoing;
		}

	}

	/**
	 * Local cache of completed results in front of the store (needs Caffeine).
	 */
	public static class LocalCache {

		/**
		 * Whether completed results are also kept in this JVM, so that replaying a hot
		 * key needs no round trip to the store. Unset: on for the Redis store while Redis
		 * invalidation tracking is established, off for the others; true on a store
		 * without tracking keeps results until the local cache's ttl, even if deleted
		 * from the store meanwhile.
		 */
		private @Nullable Boolean enabled;

		/**
		 * Largest total size of the results kept in the local cache, with their keys; a
		 * number without a unit is bytes.
		 */
		private DataSize maximumSize = DataSize.ofMegabytes(16);

		/**
		 * Longest time a result stays in the local cache, and never longer than its
		 * record's TTL; keep it below the shortest @Idempotent ttl.
		 */
		private Duration ttl = Duration.ofMinutes(1);

		/**
		 * Longest time a result changed or deleted in Redis by anyone else may still be
		 * replayed from the local cache when invalidation messages are held up (a stalled
		 * connection); heartbeats on the tracking connection are sent five times as
		 * often.
		 */
		private Duration maxStaleness = Duration.ofMillis(500);

		public @Nullable Boolean getEnabled() {
			return this.enabled;
		}

		public void setEnabled(@Nullable Boolean enabled) {
			this.enabled = enabled;
		}

		public Duration getMaxStaleness() {
			return this.maxStaleness;
		}

		public void setMaxStaleness(Duration maxStaleness) {
			this.maxStaleness = maxStaleness;
		}

		public DataSize getMaximumSize() {
			return this.maximumSize;
		}

		public void setMaximumSize(DataSize maximumSize) {
			this.maximumSize = maximumSize;
		}

		public Duration getTtl() {
			return this.ttl;
		}

		public void setTtl(Duration ttl) {
			this.ttl = ttl;
		}

	}

}
