package io.github.idempotent.store.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;
import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.jspecify.annotations.Nullable;

import org.springframework.context.SmartLifecycle;
import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.ReturnType;
import org.springframework.util.Assert;

import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.AsyncIdempotencyStore;
import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.IdempotencyRecord;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.InspectableIdempotencyStore;
import io.github.idempotent.store.RecordTracking;
import io.github.idempotent.store.StoreFullException;
import io.github.idempotent.store.StoredResult;
import io.github.idempotent.store.redis.RedisScripts.AsyncRedisCommands;

/**
 * {@link IdempotencyStore} on Redis: one string per key ({@link RecordLayout}), claimed
 * with a native {@code SET ... NX PX ... GET} (a Lua script before Redis 7.0), completed,
 * released and renewed by Lua scripts fenced by the owner's token. Every step touches one
 * key, so the store runs on Redis Cluster. Runs on Lettuce, Jedis and Redisson; the
 * asynchronous calls, {@link #setWaitReplicas waitReplicas} and invalidation tracking
 * need Lettuce. See docs/stores.md.
 */
public class RedisIdempotencyStore
		implements AsyncIdempotencyStore, InspectableIdempotencyStore, SmartLifecycle, AutoCloseable {

	private static final Log logger = LogFactory.getLog(RedisIdempotencyStore.class);

	/** How long claims take the script after the server refused the native claim. */
	static final Duration SET_CLAIM_RETRY = Duration.ofMinutes(10);

	private static final byte[] REMEMBERED_MILLIS = utf8(RecordLayout.REMEMBERED.toMillis());

	/**
	 * Largest completed record written even when Redis's memory is full, so that the call
	 * keeps its key: it takes no more memory (a 64-byte allocation) than its placeholder.
	 */
	static final int SMALL_RECORD = 60;

	private final RedisConnectionFactory connectionFactory;

	private final RedisScripts scripts;

	private final RedisMemoryMargin memoryMargin;

	/** Past 1000 releases waiting (Redis unreachable), the leases free the keys. */
	private final Executor releases = RedisClients.ownThread("idempotent-redis-release", 1000);

	private volatile long setClaimsRefusedAt;

	private volatile boolean running = true;

	public RedisIdempotencyStore(RedisConnectionFactory connectionFactory) {
		Assert.notNull(connectionFactory, "connectionFactory must not be null");
		this.connectionFactory = connectionFactory;
		this.scripts = new RedisScripts(connectionFactory);
		this.memoryMargin = new RedisMemoryMargin(connectionFactory);
		if (!this.scripts.supportsAsync()) {
			logger.info("The idempotency store runs on " + connectionFactory.getClass().getSimpleName()
					+ ": claims, fenced steps, the Actuator and the memory policy check at start-up work; off: the "
					+ "local cache (it needs Lettuce's invalidation tracking; idempotent.local-cache.enabled=true "
					+ "turns on one bounded by its TTL only), wait-replicas and asynchronous store calls (futures and "
					+ "Mono methods wait for Redis on the starter's threads), which need Lettuce");
		}
	}

	public RedisConnectionFactory getConnectionFactory() {
		return this.connectionFactory;
	}

	/**
	 * Makes every claim and completion wait (WAIT) until {@code replicas} replicas have
	 * it, or {@code timeout} passes, then logs a warning. Zero (the default) does not
	 * wait. Needs Lettuce, and is not supported on Redis Cluster.
	 */
	public void setWaitReplicas(int replicas, Duration timeout) {
		Assert.isTrue(replicas >= 0, "replicas must not be negative");
		Assert.isTrue(timeout != null && !timeout.isNegative(), "timeout must not be negative");
		this.scripts.waitReplicas(replicas, timeout);
	}

	/**
	 * Refuses new claims ({@link StoreFullException}) once Redis's used memory is above
	 * {@code limit} of its {@code maxmemory} under {@code noeviction}, so that calls in
	 * progress keep room for their results. 0.9 by default.
	 * @param limit share of {@code maxmemory}, above 0 and at most 1
	 */
	public void setClaimMemoryLimit(double limit) {
		Assert.isTrue(limit > 0 && limit <= 1, "limit must be above 0 and at most 1");
		this.memoryMargin.setLimit(limit);
	}

	/**
	 * Tells a local cache in front of this store when its records change, through Redis's
	 * server-assisted client-side caching (docs/stores.md). A {@link SmartLifecycle} that
	 * stops before the connection factory. Needs Lettuce; on Redis Cluster or another
	 * client it is not {@linkplain RecordTracking#isSupported() supported}, and its
	 * {@code toString()} says why.
	 * @param maxStaleness longest time a change on the server may go unreported while the
	 * tracking is {@linkplain RecordTracking#isCurrent() current}, at least 10 ms
	 * @return a new tracking, not started
	 */
	public RecordTracking recordTracking(Duration maxStaleness) {
		return new RedisRecordTracking(this.connectionFactory, maxStaleness, null);
	}

	/** Closes the store's own connections and threads, not the connection factory. */
	@Override
	public void close() {
		this.scripts.close();
		this.memoryMargin.close();
	}

	@Override
	public void start() {
		this.scripts.reopen();
		this.running = true;
	}

	@Override
	public void stop() {
		this.running = false;
		close();
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	@Override
	public int getPhase() {
		return RedisClients.phaseBefore(this.connectionFactory);
	}

	/**
	 * Claims with a native {@code SET key record NX PX lease GET}, which settles an
	 * absent key, a completed record and a claim re-sent with its own token. The claim
	 * script decides the rest (a record held by another, a tombstone, a value of another
	 * type) and every claim on a server before Redis 7.0.
	 */
	@Override
	public ClaimResult claim(RecordKey key, Fingerprint fingerprint, Duration lease) {
		return RedisScripts.join(claim(key, fingerprint, lease, this.scripts::blocking));
	}

	@Override
	public CompletionStage<ClaimResult> claimAsync(RecordKey key, Fingerprint fingerprint, Duration lease) {
		return claim(key, fingerprint, lease, this.scripts::async);
	}

	/**
	 * While Redis refuses writes but answers reads (memory full, a replica during a
	 * failover), a completed record is still replayed and a record in progress reported.
	 */
	private CompletableFuture<ClaimResult> claim(RecordKey key, Fingerprint fingerprint, Duration lease,
			RedisScripts.Commands commands) {
		String token = newToken();
		String full = this.memoryMargin.full();
		CompletableFuture<ClaimResult> claimed = (full != null)
				? CompletableFuture.failedFuture(new StoreFullException(full))
				: commands.run((redis) -> claimOrFail(redis, key, fingerprint, lease, token),
						ClaimResult.Acquired.class::isInstance);
		return claimed.exceptionallyCompose((failure) -> {
			Throwable ex = unwrap(failure);
			if (!(ex instanceof StoreFullException) && !RedisClients.isErrorReply(ex, "OOM ", "READONLY ")) {
				if (RedisClients.isUnanswered(ex)) {
					releaseUnanswered(key, token);
				}
				return CompletableFuture.failedFuture(ex);
			}
			return commands
				.<List<Object>>run((redis) -> redis.eval(RedisScripts.INSPECT, ReturnType.MULTI, keys(key)), null)
				.handle((reply, readFailure) -> {
					ClaimResult found = (readFailure != null) ? null : inspected(reply);
					if (found != null) {
						return found;
					}
					if (readFailure != null) {
						ex.addSuppressed(readFailure);
					}
					throw (ex instanceof RuntimeException runtime) ? runtime : new CompletionException(ex);
				});
		});
	}

	/** The inspect script's reply as a claim finds it; {@code null} for a free key. */
	private static @Nullable ClaimResult inspected(List<?> reply) {
		long kind = (Long) reply.get(0);
		if (kind != 1) {
			return (kind == 0) ? null : new ClaimResult.Damaged(RedisScripts.notARecord(reply.get(2)));
		}
		byte[] stored = (byte[]) reply.get(2);
		return RecordLayout.isTombstone(stored) ? null
				: found(stored, () -> new ClaimResult.InProgress(RecordLayout.fingerprint(stored),
						Duration.ofMillis(RecordLayout.leaseMillis((Long) reply.get(1)))));
	}

	/**
	 * Releases a claim whose answer never came, which could still reach Redis after the
	 * owner's lease ran out and fence out the owner's completion. Fenced by the claim's
	 * token and sent after it on the same connection, it deletes the claim only if it
	 * won. Nothing waits for it; where the client blocks, it runs on a thread of its own.
	 */
	private void releaseUnanswered(RecordKey key, String token) {
		(this.scripts.supportsAsync() ? releaseAsync(key, token)
				: CompletableFuture.supplyAsync(() -> release(key, token), this.releases))
			.whenComplete((released, ex) -> {
				if (ex != null) {
					logger.debug("Could not release an unanswered claim of " + key.value(), ex);
				}
			});
	}

	/** All on one connection's commands: a fallback never borrows another connection. */
	private CompletableFuture<ClaimResult> claimOrFail(AsyncRedisCommands commands, RecordKey key,
			Fingerprint fingerprint, Duration lease, String token) {
		byte[] record = RecordLayout.inProgress(RecordLayout.token(token), fingerprint, Instant.now().getEpochSecond());
		Supplier<CompletableFuture<ClaimResult>> byScript = () -> commands
			.<List<Object>>eval(RedisScripts.CLAIM, ReturnType.MULTI, keys(key), record, utf8(expiryMillis(lease)),
					REMEMBERED_MILLIS)
			.thenApply((reply) -> claimResult(reply, token));
		long refusedAt = this.setClaimsRefusedAt;
		if (refusedAt != 0 && System.nanoTime() - refusedAt <= SET_CLAIM_RETRY.toNanos()) {
			return byScript.get();
		}
		return commands.setIfAbsentGet(keyOf(key), record, expiryMillis(lease)).handle((previous, ex) -> {
			if (ex != null) {
				return isSetClaimRefused(ex) ? byScript.get() : CompletableFuture.<ClaimResult>failedFuture(unwrap(ex));
			}
			if (this.setClaimsRefusedAt != 0) {
				this.setClaimsRefusedAt = 0;
				logger.info("Redis accepts SET with NX and GET now: claims are native commands again");
			}
			if (previous != null && (RecordLayout.isTombstone(previous) || (RecordLayout.damage(previous) == null
					&& RecordLayout.isInProgress(previous) && !RecordLayout.sameOwner(previous, record)))) {
				// Whether the lease ran out is the script's to decide, atomically.
				return byScript.get();
			}
			return CompletableFuture.completedFuture((previous != null)
					? found(previous,
							() -> new ClaimResult.Acquired(token, RecordLayout.attempt(previous),
									RecordLayout.previousClaimedAt(previous, Instant.now())))
					: new ClaimResult.Acquired(token));
		}).thenCompose(Function.identity());
	}

	/**
	 * Whether the script can make the claim instead: a value of another Redis type, or a
	 * server (or proxy) without {@code SET ... NX GET}, for {@link #SET_CLAIM_RETRY}.
	 */
	private boolean isSetClaimRefused(Throwable ex) {
		if (RedisClients.anyMessage(ex, "WRONGTYPE")) {
			return true;
		}
		if (!RedisClients.anyMessage(ex, "ERR syntax error", "ERR unknown command", "ERR wrong number of arguments")) {
			return false;
		}
		if (this.setClaimsRefusedAt == 0) {
			logger.info("Redis refused SET with NX and GET (it needs Redis 7.0): claims run the claim script, which "
					+ "costs Redis more CPU per call (" + ex.getMessage() + ")");
		}
		this.setClaimsRefusedAt = System.nanoTime() | 1;
		return true;
	}

	private static ClaimResult claimResult(List<?> reply, String token) {
		long state = (Long) reply.get(0);
		if (state == RedisScripts.ACQUIRED) {
			int attempt = (reply.size() < 3) ? 1 : (int) Math.max(1, (Long) reply.get(1));
			return new ClaimResult.Acquired(token, attempt, (attempt == 1) ? null
					: RecordLayout.previousClaimedAt(attempt, (byte[]) reply.get(2), 0, Instant.now()));
		}
		if (state == RedisScripts.NOT_A_RECORD) {
			return new ClaimResult.Damaged(RedisScripts.notARecord(reply.get(1)));
		}
		byte[] stored = (byte[]) reply.get(1);
		return found(stored, () -> new ClaimResult.InProgress(RecordLayout.fingerprint(stored),
				Duration.ofMillis(Math.max(0, (Long) reply.get(2)))));
	}

	private static ClaimResult found(byte[] stored, Supplier<ClaimResult> inProgress) {
		String damage = RecordLayout.damage(stored);
		if (damage != null) {
			return new ClaimResult.Damaged(damage, RecordLayout.isLaterFormat(stored));
		}
		return RecordLayout.isInProgress(stored) ? inProgress.get() : new ClaimResult.Completed(
				RecordLayout.fingerprint(stored), new StoredResult(RecordLayout.result(stored)));
	}

	@Override
	public boolean complete(RecordKey key, String token, Fingerprint fingerprint, StoredResult result, Duration ttl) {
		return RedisScripts.join(complete(key, token, fingerprint, result, ttl, this.scripts::blocking));
	}

	@Override
	public CompletionStage<Boolean> completeAsync(RecordKey key, String token, Fingerprint fingerprint,
			StoredResult result, Duration ttl) {
		return complete(key, token, fingerprint, result, ttl, this.scripts::async);
	}

	private CompletableFuture<Boolean> complete(RecordKey key, String token, Fingerprint fingerprint,
			StoredResult result, Duration ttl, RedisScripts.Commands commands) {
		byte[] owner = RecordLayout.token(token);
		byte[] record = RecordLayout.record(RecordLayout.COMPLETED, owner, fingerprint, result.bytes());
		byte[] millis = utf8(Math.max(1, ttl.toMillis()));
		return fenced(commands, RedisScripts.COMPLETE, true, key, owner, record, millis)
			.exceptionallyCompose((failure) -> {
				Throwable ex = unwrap(failure);
				if (record.length > SMALL_RECORD || !RedisClients.isErrorReply(ex, "OOM ")) {
					return CompletableFuture.failedFuture(ex);
				}
				return fenced(commands, RedisScripts.COMPLETE_IN_FULL_MEMORY, true, key, owner, record, millis)
					.exceptionallyCompose((flaggedFailure) -> {
						ex.addSuppressed(flaggedFailure);
						return CompletableFuture.failedFuture(ex);
					});
			});
	}

	@Override
	public boolean release(RecordKey key, String token) {
		return RedisScripts
			.join(fenced(this.scripts::blocking, RedisScripts.RELEASE, false, key, RecordLayout.token(token)));
	}

	@Override
	public CompletionStage<Boolean> releaseAsync(RecordKey key, String token) {
		return fenced(this.scripts::async, RedisScripts.RELEASE, false, key, RecordLayout.token(token));
	}

	/** A script fenced by the owner's token; {@code awaited}: WAIT after it wrote. */
	private CompletableFuture<Boolean> fenced(RedisScripts.Commands commands, RedisScripts.Script script,
			boolean awaited, RecordKey key, byte[]... args) {
		return commands.run((redis) -> redis.<Long>eval(script, ReturnType.INTEGER, keys(key), args)
			.thenApply((reply) -> reply != null && reply > 0), awaited ? Boolean.TRUE::equals : null);
	}

	@Override
	public boolean renew(RecordKey key, String token, Fingerprint fingerprint, Duration lease) {
		byte[] owner = RecordLayout.token(token);
		// Written anew (attempt 1) only if the record has vanished.
		return RedisScripts
			.join(fenced(this.scripts::blocking, RedisScripts.RENEW, false, key, owner, utf8(expiryMillis(lease)),
					RecordLayout.inProgress(owner, fingerprint, Instant.now().getEpochSecond())));
	}

	@Override
	public Optional<IdempotencyRecord> inspect(RecordKey key) {
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			return Optional.ofNullable(inspect(connection, key, Instant.now()));
		}
	}

	/** {@code null} for none, or a tombstone. */
	private static @Nullable IdempotencyRecord inspect(RedisConnection connection, RecordKey key, Instant now) {
		List<Object> reply = RedisScripts.eval(connection, RedisScripts.INSPECT, ReturnType.MULTI, keys(key));
		ClaimResult found = inspected(reply);
		if (found == null) {
			return null;
		}
		long pttl = (Long) reply.get(1);
		Duration expiresIn = (pttl >= 0) ? Duration.ofMillis(pttl) : null;
		if (found instanceof ClaimResult.Damaged damaged) {
			return IdempotencyRecord.unreadable(key, damaged.damage(), expiresIn);
		}
		if (found instanceof ClaimResult.InProgress inProgress) {
			// The lease left, not the hour the placeholder is kept after it.
			return new IdempotencyRecord(key, IdempotencyRecord.State.IN_PROGRESS, inProgress.fingerprint(),
					RecordLayout.claimedAt((byte[]) reply.get(2), now),
					(expiresIn != null) ? inProgress.leaseRemaining() : null, null);
		}
		ClaimResult.Completed completed = (ClaimResult.Completed) found;
		return new IdempotencyRecord(key, IdempotencyRecord.State.COMPLETED, completed.fingerprint(), null, expiresIn,
				completed.result());
	}

	/**
	 * One SCAN step (Spring Data Redis's cursor cannot resume an earlier request's) with
	 * a MATCH on the key prefix, by script or {@link LettuceCommands#scan} on a Cluster;
	 * then one read per key.
	 */
	@Override
	public InProgressPage findInProgress(String keyPrefix, Duration olderThan, @Nullable String cursor, int limit) {
		Assert.hasText(keyPrefix, "keyPrefix must not be empty");
		Assert.isTrue(limit > 0, "limit must be positive");
		byte[] pattern = utf8(keyPrefix.replaceAll("([*?\\[\\]\\\\])", "\\\\$1") + ":*");
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			ScanStep scanned = (connection instanceof RedisClusterConnection && this.scripts.supportsAsync())
					? LettuceCommands.scan(connection.getNativeConnection(), pattern, cursor, limit)
					: scanByScript(connection, pattern, cursor, limit);
			Instant now = Instant.now();
			List<IdempotencyRecord> records = new ArrayList<>();
			for (byte[] key : scanned.keys()) {
				IdempotencyRecord record = inspect(connection, new RecordKey(new String(key, StandardCharsets.UTF_8)),
						now);
				// An unreadable record may be a call in progress: listed at any age.
				if (record != null && (record.state() == IdempotencyRecord.State.UNREADABLE
						|| (record.state() == IdempotencyRecord.State.IN_PROGRESS
								&& (record.age(now) == null || record.age(now).compareTo(olderThan) >= 0)))) {
					records.add(record);
				}
			}
			return new InProgressPage(records, scanned.next());
		}
	}

	@SuppressWarnings("unchecked")
	private static ScanStep scanByScript(RedisConnection connection, byte[] pattern, @Nullable String cursor,
			int limit) {
		if (connection instanceof RedisClusterConnection) {
			throw new UnsupportedOperationException(
					"Finding the records in progress on Redis Cluster needs a LettuceConnectionFactory");
		}
		List<Object> reply = RedisScripts.eval(connection, RedisScripts.SCAN, ReturnType.MULTI, new byte[0][],
				utf8((cursor != null) ? cursor : "0"), pattern, utf8(limit));
		String next = new String((byte[]) reply.get(0), StandardCharsets.US_ASCII);
		return new ScanStep((List<byte[]>) reply.get(1), next.equals("0") ? null : next);
	}

	record ScanStep(List<byte[]> keys, @Nullable String next) {
	}

	@Override
	public boolean delete(RecordKey key) {
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			Long deleted = connection.keyCommands().del(keyOf(key));
			return deleted != null && deleted > 0;
		}
	}

	/** A forced delete leaves a tombstone, which fences the deleted call's owner out. */
	@Override
	public Deletion deleteInProgress(RecordKey key) {
		return deleteIf(key, RecordLayout.IN_PROGRESS);
	}

	@Override
	public Deletion deleteUnlessHeld(RecordKey key) {
		return deleteIf(key, RecordLayout.COMPLETED);
	}

	private Deletion deleteIf(RecordKey key, byte state) {
		Long reply = RedisScripts.join(this.scripts.blocking((redis) -> redis.<Long>eval(RedisScripts.DELETE_IF,
				ReturnType.INTEGER, keys(key), new byte[] { state }, REMEMBERED_MILLIS), null));
		return (reply == null || reply == 0) ? Deletion.NONE
				: (reply == 1) ? Deletion.DELETED : (reply == 2) ? Deletion.HELD : Deletion.COMPLETED;
	}

	/**
	 * 64 random bits as 16 hex digits, stored as 8 bytes: a token only has to differ from
	 * the other claims of its key within one lease or TTL.
	 */
	static String newToken() {
		return HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());
	}

	/** Lettuce, and no replica to await (WAIT stays blocking). */
	@Override
	public boolean supportsAsync() {
		return !this.scripts.awaitsReplicas() && this.scripts.supportsAsync();
	}

	static byte[] keyOf(RecordKey key) {
		return utf8(key.value());
	}

	private static byte[][] keys(RecordKey key) {
		return new byte[][] { keyOf(key) };
	}

	private static Throwable unwrap(Throwable failure) {
		return (failure instanceof CompletionException && failure.getCause() != null) ? failure.getCause() : failure;
	}

	private static byte[] utf8(Object value) {
		return value.toString().getBytes(StandardCharsets.UTF_8);
	}

	/** A placeholder's key expires its lease plus {@link RecordLayout#REMEMBERED}. */
	private static long expiryMillis(Duration lease) {
		return Math.max(1, lease.toMillis()) + RecordLayout.REMEMBERED.toMillis();
	}

}
