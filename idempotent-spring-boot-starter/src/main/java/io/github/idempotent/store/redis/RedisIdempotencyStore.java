package io.github.idempotent.store.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;
import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.jspecify.annotations.Nullable;

import org.springframework.context.SmartLifecycle;
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
import io.github.idempotent.store.StoreFullException;
import io.github.idempotent.store.StoredResult;

/**
 * {@link IdempotencyStore} on Redis. A record is one string under one key: a state byte,
 * the token of the owner (then of the owner that completed it), the fingerprint and the
 * result ({@link RecordLayout}, record format 1). Every primitive is one atomic command,
 * so each costs one round trip: a claim is a native {@code SET ... NX PX ... GET} (a Lua
 * script on servers before Redis 7.0), completion, release and renewal are Lua scripts
 * (EVALSHA), which compare the owner's token before they write. A first call costs two
 * round trips, a replay one. Each touches only its own key, so the store runs on Redis
 * Cluster; expiry is the server's (PEXPIRE): the lease and {@link RecordLayout#REMEMBERED
 * an hour} while in progress, so that a claim that takes over from an owner that died
 * knows it does; the TTL once completed.
 * <p>
 * Redis replicates asynchronously: a claim or result acknowledged by a primary that then
 * fails may be missing on the replica promoted in its place. With
 * {@link #setWaitReplicas(int, Duration) waitReplicas}, every claim and completion waits
 * (WAIT) until that many replicas have it, which narrows that window but does not close
 * it (see docs/stores.md). Those writes and their WAIT run on connections of the store's
 * own, one caller at a time ({@link DedicatedConnections}); everything else, and every
 * write when no replica is awaited, runs on the application's connection. As a
 * {@link SmartLifecycle} bean it closes them one phase before the connection factory
 * stops, while Lettuce still runs (closed by Lettuce's shutdown first, they would be
 * closed twice, with a warning).
 * <p>
 * This class holds the claim, completion, release and renewal, blocking and asynchronous.
 * The Lua scripts are {@code .lua} files ({@link RedisScripts}); how they and the native
 * claim are sent, and over which connection, is {@link RedisScriptRunner}'s; what
 * operators see and delete (the Actuator) is {@link RedisRecordInspection}'s.
 * <p>
 * Runs on every connection factory of Spring Data Redis: Lettuce with everything; Jedis
 * and Redisson with the claims, the fenced steps and the Actuator, while asynchronous
 * calls, {@link #setWaitReplicas waitReplicas} and invalidation tracking
 * ({@link RedisRecordTracking}) need Lettuce (the store says so once when it is created).
 * No signature here names a client's type: an application without Lettuce loads this
 * class as one with it does.
 */
public class RedisIdempotencyStore
		implements AsyncIdempotencyStore, InspectableIdempotencyStore, SmartLifecycle, AutoCloseable {

	private static final Log logger = LogFactory.getLog(RedisIdempotencyStore.class);

	/**
	 * How long claims take the script after the server refused the native claim.
	 */
	static final Duration SET_CLAIM_RETRY = Duration.ofMinutes(10);

	private static final long REMEMBERED_MILLIS_VALUE = RecordLayout.REMEMBERED.toMillis();

	/** {@link RecordLayout#REMEMBERED} as the scripts take it. */
	static final byte[] REMEMBERED_MILLIS = utf8(Long.toString(REMEMBERED_MILLIS_VALUE));

	/**
	 * Bytes of a completed record written even when Redis's memory is full: a placeholder
	 * (48 bytes with a digest fingerprint) and a value of up to 60 bytes take the same
	 * memory, an allocation of 64 bytes with the string's header.
	 */
	static final int SMALL_RECORD = 60;

	private final RedisConnectionFactory connectionFactory;

	private final RedisScriptRunner scripts;

	private final RedisRecordInspection inspection;

	private final RedisMemoryMargin memoryMargin;

	// When the server last refused SET with NX and GET (before Redis 7.0), 0 if never.
	private volatile long setClaimsRefusedAt;

	private volatile boolean running = true;

	public RedisIdempotencyStore(RedisConnectionFactory connectionFactory) {
		Assert.notNull(connectionFactory, "connectionFactory must not be null");
		this.connectionFactory = connectionFactory;
		this.scripts = new RedisScriptRunner(connectionFactory);
		this.inspection = new RedisRecordInspection(connectionFactory, this.scripts);
		this.memoryMargin = new RedisMemoryMargin(connectionFactory, this.scripts);
		if (!this.scripts.supportsAsync()) {
			logger.info("The idempotency store runs on " + connectionFactory.getClass().getSimpleName()
					+ ": claims, fenced steps, the Actuator and the memory policy check at start-up work; off: the "
					+ "local cache (it needs Lettuce's invalidation tracking; idempotent.local-cache.enabled=true "
					+ "turns on one bounded by its TTL only), wait-replicas and asynchronous store calls (futures and "
					+ "Mono methods wait for Redis on the starter's threads), which need Lettuce");
		}
	}

	/**
	 * The connection factory the store's records are read and written through: anything
	 * that must see the same Redis (invalidation tracking, for one) connects through it.
	 * @return the store's connection factory
	 */
	public RedisConnectionFactory getConnectionFactory() {
		return this.connectionFactory;
	}

	/**
	 * Makes every claim and completion wait until {@code replicas} replicas have
	 * acknowledged it, or {@code timeout} passes (then a warning is logged and the call
	 * goes on). Zero replicas (the default) does not wait. Needs a
	 * {@code LettuceConnectionFactory} for a standalone or Sentinel Redis: not supported
	 * on Redis Cluster, where WAIT would have to follow the write to the node that owns
	 * the key. Call it before the store is used.
	 */
	public void setWaitReplicas(int replicas, Duration timeout) {
		Assert.isTrue(replicas >= 0, "replicas must not be negative");
		Assert.isTrue(timeout != null && !timeout.isNegative(), "timeout must not be negative");
		this.scripts.waitReplicas(replicas, timeout);
	}

	/**
	 * Refuses new claims as the store being full (a {@link StoreFullException}) once
	 * Redis's used memory is above {@code limit} of its {@code maxmemory} under
	 * {@code maxmemory-policy noeviction}, so that the calls in progress keep room for
	 * their results: Redis takes a placeholder while it refuses the larger result that
	 * follows. Read from {@code INFO memory} at most once a second, in the background
	 * ({@link RedisMemoryMargin}). 0.9 by default; 1 refuses nothing before Redis does.
	 * @param limit share of {@code maxmemory}, above 0 and at most 1
	 */
	public void setClaimMemoryLimit(double limit) {
		Assert.isTrue(limit > 0 && limit <= 1, "limit must be above 0 and at most 1");
		this.memoryMargin.setLimit(limit);
	}

	/**
	 * Closes the connections of the store's own ({@code wait-replicas}); the
	 * application's connection factory is left as it is.
	 */
	@Override
	public void close() {
		this.scripts.close();
	}

	/**
	 * Keeps connections of the store's own open between calls again after
	 * {@link #stop()}.
	 */
	@Override
	public void start() {
		this.scripts.reopen();
		this.running = true;
	}

	/**
	 * Closes the connections of the store's own before the connection factory stops;
	 * calls still running meanwhile open and close their own.
	 */
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
	 * Claims with one native command, {@code SET key record NX PX lease GET}: it writes
	 * the placeholder if there is no record and answers the record there was, which
	 * settles an absent key, a completed record, a record in progress (then a
	 * {@code PTTL} reads its lease left) and a claim re-sent with its own token, at a
	 * tenth of the script's cost in Redis. The claim script decides a value of another
	 * Redis type (WRONGTYPE), a tombstone of a forced delete (which NX sees as a record,
	 * so only after forced deletes does a claim cost a second step) and every claim on a
	 * server that refuses NX with GET (before Redis 7.0; the native claim is tried again
	 * every 10 minutes in case the server was upgraded).
	 */
	@Override
	public ClaimResult claim(RecordKey key, Fingerprint fingerprint, Duration lease) {
		return RedisScriptRunner.join(claim(key, fingerprint, lease, this.scripts::blocking));
	}

	@Override
	public CompletionStage<ClaimResult> claimAsync(RecordKey key, Fingerprint fingerprint, Duration lease) {
		return claim(key, fingerprint, lease, this.scripts::async);
	}

	/**
	 * The claim, blocking or not. When Redis refuses writes but still answers reads (its
	 * memory full under {@code noeviction}, or within {@link #setClaimMemoryLimit the
	 * margin} kept for results; a replica during a failover), a completed record is
	 * replayed and a record in progress is in progress, as they would be if the claim had
	 * been accepted. Only a free key cannot be claimed; then the refusal stands, and the
	 * call is refused as with the store full or unavailable. Without this read, a retry
	 * of a completed call would be refused (503) or, with {@code failure-mode=open}, run
	 * its method again.
	 */
	private CompletableFuture<ClaimResult> claim(RecordKey key, Fingerprint fingerprint, Duration lease,
			RedisScriptRunner.Commands commands) {
		String token = newToken();
		String full = this.memoryMargin.full();
		CompletableFuture<ClaimResult> claimed = (full != null)
				? CompletableFuture.failedFuture(new StoreFullException(full))
				: commands.run((redis) -> claimOrFail(redis, key, fingerprint, lease, token),
						ClaimResult.Acquired.class::isInstance);
		return claimed.exceptionallyCompose((failure) -> {
			Throwable ex = (failure instanceof CompletionException && failure.getCause() != null) ? failure.getCause()
					: failure;
			if (!(ex instanceof StoreFullException) && !isWriteRefusal(ex, "OOM ", "READONLY ")) {
				if (isUnanswered(ex)) {
					releaseUnanswered(key, token);
				}
				return CompletableFuture.failedFuture(ex);
			}
			return commands.<List<Object>>run(
					(redis) -> redis.eval(RedisScripts.INSPECT, ReturnType.MULTI, new byte[][] { keyOf(key) }), null)
				.handle((reply, readFailure) -> {
					ClaimResult found = (readFailure != null) ? null : whileWritesAreRefused(key, reply);
					if (found == null) {
						if (readFailure != null) {
							ex.addSuppressed(readFailure);
						}
						throw (ex instanceof RuntimeException runtime) ? runtime : new CompletionException(ex);
					}
					return found;
				});
		});
	}

	/**
	 * What the inspect script's {@code reply} means to a claim while writes are refused,
	 * {@code null} for a free key.
	 */
	private static @Nullable ClaimResult whileWritesAreRefused(RecordKey key, List<?> reply) {
		IdempotencyRecord record = RedisRecordInspection.record(key, reply, Instant.now());
		if (record == null) {
			return null;
		}
		return switch (record.state()) {
			case COMPLETED -> new ClaimResult.Completed(record.fingerprint(), record.result());
			case IN_PROGRESS -> new ClaimResult.InProgress(record.fingerprint(),
					(record.expiresIn() != null) ? record.expiresIn() : Duration.ZERO);
			case UNREADABLE -> new ClaimResult.Damaged(record.damage(),
					reply.get(2) instanceof byte[] stored && RecordLayout.isLaterFormat(stored));
		};
	}

	/**
	 * Whether Redis refused a write with one of {@code replies} ({@code OOM}: its memory
	 * is full; {@code READONLY}: a replica): it still answers reads.
	 */
	private static boolean isWriteRefusal(Throwable failure, String... replies) {
		for (Throwable ex = failure; ex != null && ex.getCause() != ex; ex = ex.getCause()) {
			if (RedisClients.isErrorReply(ex, replies)) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Releases a claim whose answer never came (a timeout, a broken connection): its
	 * caller is refused, so nobody runs under it, but it may still reach Redis, held by a
	 * network that stalled, and win the key once the owner's lease has run out. It would
	 * then hold the key for a lease and fence out the owner's completion, queued behind
	 * it, so that the result is lost and a retry runs the method again. The release, sent
	 * after it on the same connection, deletes it only if it won: it is fenced by the
	 * claim's own token (a claim that won by taking the key over leaves a tombstone, as
	 * any released takeover does, so that the next claim still knows it takes over).
	 * Nothing waits for it.
	 */
	private void releaseUnanswered(RecordKey key, String token) {
		try {
			(this.scripts.supportsAsync() ? releaseAsync(key, token)
					: CompletableFuture.supplyAsync(() -> release(key, token)))
				.whenComplete((released, ex) -> {
					if (ex != null && logger.isDebugEnabled()) {
						logger.debug("Could not release an unanswered claim of " + key.value(), ex);
					}
				});
		}
		catch (RuntimeException ex) {
			logger.debug("Could not release an unanswered claim of " + key.value(), ex);
		}
	}

	/**
	 * Whether a claim failed without an answer, so that Redis may still run it: a
	 * timeout, or a connection that broke with the claim on its way.
	 */
	private static boolean isUnanswered(Throwable failure) {
		for (Throwable ex = failure; ex != null && ex.getCause() != ex; ex = ex.getCause()) {
			if (ex instanceof java.io.IOException || RedisClients.isUnanswered(ex)) {
				return true;
			}
		}
		return false;
	}

	/**
	 * The native claim, then the claim script where it must decide, all on one
	 * connection's commands: a fallback never borrows another connection (on Lettuce's
	 * event loop).
	 */
	private CompletableFuture<ClaimResult> claimOrFail(AsyncRedisCommands commands, RecordKey key,
			Fingerprint fingerprint, Duration lease, String token) {
		byte[] redisKey = keyOf(key);
		byte[] record = claimRecord(token, fingerprint);
		Supplier<CompletableFuture<ClaimResult>> byScript = () -> commands
			.<List<Object>>eval(RedisScripts.CLAIM, ReturnType.MULTI, new byte[][] { redisKey }, record, expiry(lease),
					REMEMBERED_MILLIS)
			.thenApply((reply) -> claimResult(reply, token));
		if (!useSetClaims()) {
			return byScript.get();
		}
		return commands.setIfAbsentGet(redisKey, record, expiryMillis(lease)).handle((previous, ex) -> {
			if (ex != null) {
				if (isSetClaimRefused(ex)) {
					return byScript.get();
				}
				return CompletableFuture.<ClaimResult>failedFuture(
						(ex instanceof CompletionException && ex.getCause() != null) ? ex.getCause() : ex);
			}
			setClaimsAccepted();
			if (previous != null && RecordLayout.isTombstone(previous)) {
				// Taken over by the claim script, which decides again on what is there
				// now.
				return byScript.get();
			}
			if (isHeldByAnother(previous, record)) {
				return commands.pttl(redisKey).thenCompose((pttl) -> {
					if (pttl != null && isLeaseOver(pttl)) {
						return byScript.get();
					}
					return CompletableFuture.completedFuture(inProgress(previous, (pttl != null) ? pttl : 0));
				});
			}
			return CompletableFuture.completedFuture(setClaimResult(previous, token));
		}).thenCompose(Function.identity());
	}

	/**
	 * Whether the placeholder a native claim found, whose key has {@code pttl} left, no
	 * longer holds its lease (or has gone since), so that the claim script may take the
	 * key over: it decides again, atomically, on what is there then.
	 */
	private static boolean isLeaseOver(long pttl) {
		return pttl != -1 && pttl <= REMEMBERED_MILLIS_VALUE;
	}

	/**
	 * Whether the record a native claim found is in progress under another token.
	 */
	private static boolean isHeldByAnother(byte @Nullable [] previous, byte[] record) {
		return previous != null && RecordLayout.damage(previous) == null && RecordLayout.isInProgress(previous)
				&& !RecordLayout.sameOwner(previous, record);
	}

	private static ClaimResult inProgress(byte[] previous, long pttlMillis) {
		// The lease left just after the claim; -2 if the record ended meanwhile.
		return new ClaimResult.InProgress(RecordLayout.fingerprint(previous),
				Duration.ofMillis(RecordLayout.leaseMillis(pttlMillis)));
	}

	/**
	 * What a native claim found, other than a record held by another owner: none (the
	 * claim wrote its placeholder), a completed record, its own placeholder (a claim sent
	 * again after a broken connection, whose first send wrote it), or a value it cannot
	 * read, which SET with NX has left as it was.
	 */
	private static ClaimResult setClaimResult(byte @Nullable [] previous, String token) {
		if (previous == null) {
			return new ClaimResult.Acquired(token);
		}
		String damage = RecordLayout.damage(previous);
		if (damage != null) {
			return damaged(previous, damage);
		}
		if (RecordLayout.isInProgress(previous)) {
			// Its own: the attempt it is, as the first send wrote it.
			return new ClaimResult.Acquired(token, RecordLayout.attempt(previous),
					RecordLayout.previousClaimedAt(previous, Instant.now()));
		}
		return new ClaimResult.Completed(RecordLayout.fingerprint(previous),
				new StoredResult(RecordLayout.result(previous)));
	}

	private boolean useSetClaims() {
		long refusedAt = this.setClaimsRefusedAt;
		return refusedAt == 0 || System.nanoTime() - refusedAt > SET_CLAIM_RETRY.toNanos();
	}

	private void setClaimsAccepted() {
		if (this.setClaimsRefusedAt != 0) {
			this.setClaimsRefusedAt = 0;
			logger.info("Redis accepts SET with NX and GET now: claims are native commands again");
		}
	}

	/**
	 * Whether the server refused a native claim that the script can make instead: a value
	 * of another Redis type (WRONGTYPE, this key only), or a server (or proxy) that does
	 * not know {@code SET} with {@code NX} and {@code GET}, such as Redis before 7.0:
	 * then claims take the script for 10 minutes. Any other error (a full or read-only
	 * server, a timeout) is the caller's.
	 */
	private boolean isSetClaimRefused(Throwable ex) {
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			String message = cause.getMessage();
			if (message == null) {
				continue;
			}
			if (message.startsWith("WRONGTYPE") || message.contains(" WRONGTYPE")) {
				return true;
			}
			if (message.contains("ERR syntax error") || message.contains("ERR unknown command")
					|| message.contains("ERR wrong number of arguments")) {
				if (this.setClaimsRefusedAt == 0) {
					logger.info("Redis refused SET with NX and GET (it needs Redis 7.0): claims run the claim "
							+ "script, which costs Redis more CPU per call (" + message + ")");
				}
				this.setClaimsRefusedAt = System.nanoTime() | 1;
				return true;
			}
		}
		return false;
	}

	private static byte[] claimRecord(String token, Fingerprint fingerprint) {
		return RecordLayout.inProgress(RecordLayout.token(token), fingerprint, Instant.now().getEpochSecond());
	}

	private static byte[] completedRecord(byte[] owner, Fingerprint fingerprint, StoredResult result) {
		return RecordLayout.record(RecordLayout.COMPLETED, owner, fingerprint, result.bytes());
	}

	private static ClaimResult claimResult(@Nullable List<?> reply, String token) {
		Assert.state(reply != null && !reply.isEmpty(), "Empty reply from the claim script");
		long state = (Long) reply.get(0);
		if (state == RedisScripts.ACQUIRED) {
			return acquired(token, reply);
		}
		if (state == RedisScripts.NOT_A_RECORD) {
			return new ClaimResult.Damaged(RedisScripts.notARecord(reply.get(1)));
		}
		byte[] stored = (byte[]) reply.get(1);
		String damage = RecordLayout.damage(stored);
		if (damage != null) {
			return damaged(stored, damage);
		}
		return (state == RedisScripts.IN_PROGRESS)
				? new ClaimResult.InProgress(RecordLayout.fingerprint(stored),
						Duration.ofMillis(Math.max(0, (Long) reply.get(2))))
				: new ClaimResult.Completed(RecordLayout.fingerprint(stored),
						new StoredResult(RecordLayout.result(stored)));
	}

	/**
	 * A value the store cannot read: written by a later format (a newer version, which a
	 * retry may reach), or damaged.
	 */
	static ClaimResult.Damaged damaged(byte[] stored, String damage) {
		return new ClaimResult.Damaged(damage, RecordLayout.isLaterFormat(stored));
	}

	/**
	 * The claim script's {@code {1}} (a first attempt) or {@code {1, attempt, started}}:
	 * the attempt this claim is and the 3-byte claim time of the attempt it took over
	 * (zero when unknown).
	 */
	private static ClaimResult.Acquired acquired(String token, List<?> reply) {
		if (reply.size() < 3) {
			return new ClaimResult.Acquired(token);
		}
		int attempt = (int) Math.max(1, (Long) reply.get(1));
		byte[] started = (byte[]) reply.get(2);
		Instant previous = (attempt == 1 || started == null || RecordLayout.isNoTime(started, 0)) ? null
				: RecordLayout.readTime(started, 0, Instant.now());
		return new ClaimResult.Acquired(token, attempt, previous);
	}

	/**
	 * Writes the completed record over the owner's placeholder. Redis refuses every write
	 * once its memory is full ({@code OOM}, under {@code noeviction}); a completed record
	 * that takes no more memory than the placeholder it replaces (at most
	 * {@value #SMALL_RECORD} bytes, as the record of a result that was not stored is) is
	 * then written all the same, by the script flagged {@code allow-oom} (Redis 7.0 or
	 * later), so that the call keeps its key.
	 */
	@Override
	public boolean complete(RecordKey key, String token, Fingerprint fingerprint, StoredResult result, Duration ttl) {
		return RedisScriptRunner.join(complete(key, token, fingerprint, result, ttl, this.scripts::blocking));
	}

	@Override
	public CompletionStage<Boolean> completeAsync(RecordKey key, String token, Fingerprint fingerprint,
			StoredResult result, Duration ttl) {
		return complete(key, token, fingerprint, result, ttl, this.scripts::async);
	}

	/**
	 * Writes the completed record over the owner's placeholder. Redis refuses every write
	 * once its memory is full ({@code OOM}, under {@code noeviction}); a completed record
	 * that takes no more memory than the placeholder it replaces (at most
	 * {@value #SMALL_RECORD} bytes, as the record of a result that was not stored is) is
	 * then written all the same, by the script flagged {@code allow-oom} (Redis 7.0 or
	 * later), so that the call keeps its key.
	 */
	private CompletableFuture<Boolean> complete(RecordKey key, String token, Fingerprint fingerprint,
			StoredResult result, Duration ttl, RedisScriptRunner.Commands commands) {
		byte[] owner = RecordLayout.token(token);
		byte[] record = completedRecord(owner, fingerprint, result);
		return fenced(commands, RedisScripts.COMPLETE, true, key, owner, record, millis(ttl))
			.exceptionallyCompose((failure) -> {
				Throwable ex = (failure instanceof CompletionException && failure.getCause() != null)
						? failure.getCause() : failure;
				if (record.length > SMALL_RECORD || !isWriteRefusal(ex, "OOM ")) {
					return CompletableFuture.failedFuture(ex);
				}
				return fenced(commands, RedisScripts.COMPLETE_IN_FULL_MEMORY, true, key, owner, record, millis(ttl))
					.exceptionallyCompose((flaggedFailure) -> {
						ex.addSuppressed(flaggedFailure);
						return CompletableFuture.failedFuture(ex);
					});
			});
	}

	@Override
	public boolean release(RecordKey key, String token) {
		return RedisScriptRunner
			.join(fenced(this.scripts::blocking, RedisScripts.RELEASE, false, key, RecordLayout.token(token)));
	}

	@Override
	public CompletionStage<Boolean> releaseAsync(RecordKey key, String token) {
		return fenced(this.scripts::async, RedisScripts.RELEASE, false, key, RecordLayout.token(token));
	}

	/**
	 * A script fenced by the owner's token, which answers a positive number when it
	 * wrote; if {@code awaited}, replicas are awaited (WAIT) then.
	 */
	private CompletableFuture<Boolean> fenced(RedisScriptRunner.Commands commands, RedisScripts.Script script,
			boolean awaited, RecordKey key, byte[]... args) {
		return commands.run((redis) -> redis.<Long>eval(script, ReturnType.INTEGER, new byte[][] { keyOf(key) }, args)
			.thenApply(RedisIdempotencyStore::isPositive), awaited ? Boolean.TRUE::equals : null);
	}

	@Override
	public boolean renew(RecordKey key, String token, Fingerprint fingerprint, Duration lease) {
		byte[] owner = RecordLayout.token(token);
		// The record is written only if it has vanished: then it is claimed anew, now.
		// A record written anew has lost its count: it is attempt 1 again (a takeover of
		// it still knows it takes over, and when it was written).
		return RedisScriptRunner.join(fenced(this.scripts::blocking, RedisScripts.RENEW, false, key, owner,
				expiry(lease), RecordLayout.inProgress(owner, fingerprint, Instant.now().getEpochSecond())));
	}

	@Override
	public Optional<IdempotencyRecord> inspect(RecordKey key) {
		return this.inspection.inspect(key);
	}

	/**
	 * SCAN with a MATCH on the key prefix and a COUNT of {@code limit}, then one read per
	 * key found ({@link RedisRecordInspection}). On Redis Cluster it needs Lettuce.
	 */
	@Override
	public InProgressPage findInProgress(String keyPrefix, Duration olderThan, @Nullable String cursor, int limit) {
		Assert.hasText(keyPrefix, "keyPrefix must not be empty");
		Assert.isTrue(limit > 0, "limit must be positive");
		return this.inspection.findInProgress(keyPrefix, olderThan, cursor, limit);
	}

	@Override
	public boolean delete(RecordKey key) {
		return this.inspection.delete(key);
	}

	@Override
	public Deletion deleteInProgress(RecordKey key) {
		return this.inspection.deleteIf(key, RecordLayout.IN_PROGRESS);
	}

	@Override
	public Deletion deleteUnlessHeld(RecordKey key) {
		return this.inspection.deleteIf(key, RecordLayout.COMPLETED);
	}

	/**
	 * A token of 64 random bits, as 16 hex digits ({@link RecordLayout#token} stores them
	 * as 8 bytes). A token only has to differ from the other claims of the same key
	 * within one lease or TTL, so 64 bits are plenty, and each byte saved is saved per
	 * record.
	 */
	static String newToken() {
		long bits = ThreadLocalRandom.current().nextLong();
		return HexFormat.of().withLowerCase().toHexDigits(bits);
	}

	/**
	 * Whether claims and completions can go through Lettuce's asynchronous API: with a
	 * Lettuce connection factory and no replica to await (WAIT stays on the blocking
	 * path, which runs on a separate executor for asynchronous callers).
	 */
	@Override
	public boolean supportsAsync() {
		return !this.scripts.awaitsReplicas() && this.scripts.supportsAsync();
	}

	static byte[] keyOf(RecordKey key) {
		return utf8(key.value());
	}

	private static byte[] utf8(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	private static byte[] millis(Duration duration) {
		return utf8(Long.toString(Math.max(1, duration.toMillis())));
	}

	/**
	 * The expiry of a placeholder's key: its lease, then {@link RecordLayout#REMEMBERED}.
	 */
	private static long expiryMillis(Duration lease) {
		return Math.max(1, lease.toMillis()) + REMEMBERED_MILLIS_VALUE;
	}

	private static byte[] expiry(Duration lease) {
		return utf8(Long.toString(expiryMillis(lease)));
	}

	private static boolean isPositive(@Nullable Long reply) {
		return reply != null && reply > 0;
	}

}
