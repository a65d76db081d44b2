package io.github.idempotent.store.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.Predicate;

import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.BaseRedisAsyncCommands;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.jspecify.annotations.Nullable;

import org.springframework.context.SmartLifecycle;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisScriptingCommands;
import org.springframework.data.redis.connection.RedisStringCommands;
import org.springframework.data.redis.connection.ReturnType;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.types.Expiration;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.util.Assert;

import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.AsyncIdempotencyStore;
import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.IdempotencyRecord;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.InspectableIdempotencyStore;
import io.github.idempotent.store.StoredResult;

/**
 * {@link IdempotencyStore} on Redis. A record is one string under one key: a state byte,
 * the token of the owner (then of the owner that completed it), the fingerprint and the
 * result ({@link RecordLayout}); records of the previous layout, hashes, are still read.
 * Every primitive is one atomic command, so each costs one round trip: a claim is a
 * native {@code SET ... NX PX ... GET} (a Lua script on servers before Redis 7.0 and for
 * records of the previous layout), completion, release and renewal are Lua scripts
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
 */
public class RedisIdempotencyStore
		implements AsyncIdempotencyStore, InspectableIdempotencyStore, SmartLifecycle, AutoCloseable {

	private static final Log logger = LogFactory.getLog(RedisIdempotencyStore.class);

	/**
	 * How long claims take the script after the server refused the native claim.
	 */
	static final Duration SET_CLAIM_RETRY = Duration.ofMinutes(10);

	private static final long REMEMBERED_MILLIS_VALUE = RecordLayout.REMEMBERED.toMillis();

	private static final byte[] REMEMBERED_MILLIS = utf8(Long.toString(REMEMBERED_MILLIS_VALUE));

	private final RedisConnectionFactory connectionFactory;

	private int waitReplicas;

	private Duration waitTimeout = Duration.ofMillis(500);

	private @Nullable DedicatedConnections dedicatedConnections;

	// When the server last refused SET with NX and GET (before Redis 7.0), 0 if never.
	private volatile long setClaimsRefusedAt;

	private volatile boolean running = true;

	public RedisIdempotencyStore(RedisConnectionFactory connectionFactory) {
		Assert.notNull(connectionFactory, "connectionFactory must not be null");
		this.connectionFactory = connectionFactory;
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
	 * {@link LettuceConnectionFactory} for a standalone or Sentinel Redis: not supported
	 * on Redis Cluster, where WAIT would have to follow the write to the node that owns
	 * the key. Call it before the store is used.
	 */
	public void setWaitReplicas(int replicas, Duration timeout) {
		Assert.isTrue(replicas >= 0, "replicas must not be negative");
		Assert.isTrue(timeout != null && !timeout.isNegative(), "timeout must not be negative");
		DedicatedConnections previous = this.dedicatedConnections;
		this.dedicatedConnections = (replicas > 0) ? DedicatedConnections.of(this.connectionFactory) : null;
		this.waitReplicas = replicas;
		this.waitTimeout = timeout;
		if (previous != null) {
			previous.close();
		}
	}

	/**
	 * Closes the connections of the store's own ({@code wait-replicas}); the
	 * application's connection factory is left as it is.
	 */
	@Override
	public void close() {
		DedicatedConnections connections = this.dedicatedConnections;
		if (connections != null) {
			connections.close();
		}
	}

	/**
	 * Keeps connections of the store's own open between calls again after
	 * {@link #stop()}.
	 */
	@Override
	public void start() {
		DedicatedConnections connections = this.dedicatedConnections;
		if (connections != null) {
			connections.reopen();
		}
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
		return RedisRecordTracking.phaseBefore(this.connectionFactory);
	}

	/**
	 * Claims with one native command, {@code SET key record NX PX lease GET}: it writes
	 * the placeholder if there is no record and answers the record there was, which
	 * settles an absent key, a completed record, a record in progress (then a
	 * {@code PTTL} reads its lease left) and a claim re-sent with its own token, at a
	 * tenth of the script's cost in Redis. The claim script decides a record of the
	 * previous layout (WRONGTYPE), a tombstone of a forced delete (which NX sees as a
	 * record, so only after forced deletes does a claim cost a second step) and every
	 * claim on a server that refuses NX with GET (before Redis 7.0; the native claim is
	 * tried again every 10 minutes in case the server was upgraded).
	 */
	@Override
	public ClaimResult claim(RecordKey key, Fingerprint fingerprint, Duration lease) {
		String token = newToken();
		try {
			return claimOrFail(key, fingerprint, lease, token);
		}
		catch (RuntimeException ex) {
			if (!isWriteRefusal(ex)) {
				if (isUnanswered(ex)) {
					releaseUnanswered(key, token);
				}
				throw ex;
			}
			ClaimResult found;
			try {
				found = whileWritesAreRefused(inspect(key).orElse(null));
			}
			catch (RuntimeException readFailure) {
				ex.addSuppressed(readFailure);
				throw ex;
			}
			if (found == null) {
				throw ex;
			}
			return found;
		}
	}

	/**
	 * What a claim answers when Redis refuses writes but still answers reads (its memory
	 * full under {@code noeviction}, a replica during a failover): a completed record is
	 * replayed and a record in progress is in progress, as they would be if the claim had
	 * been accepted. Only a free key cannot be claimed; then the refusal stands, and the
	 * call is refused as with the store unavailable. Without this read, a retry of a
	 * completed call would be refused (503) or, with {@code failure-mode=open}, run its
	 * method again.
	 */
	private static @Nullable ClaimResult whileWritesAreRefused(@Nullable IdempotencyRecord record) {
		if (record == null) {
			return null;
		}
		return switch (record.state()) {
			case COMPLETED -> new ClaimResult.Completed(record.fingerprint(), record.result());
			case IN_PROGRESS -> new ClaimResult.InProgress(record.fingerprint(),
					(record.expiresIn() != null) ? record.expiresIn() : Duration.ZERO);
			case UNREADABLE -> new ClaimResult.Damaged(record.damage());
		};
	}

	/**
	 * Whether Redis refused a write for want of memory or as a read-only replica: it
	 * still answers reads.
	 */
	private static boolean isWriteRefusal(Throwable failure) {
		for (Throwable ex = failure; ex != null && ex.getCause() != ex; ex = ex.getCause()) {
			String message = ex.getMessage();
			if (ex instanceof RedisCommandExecutionException && message != null
					&& (message.startsWith("OOM ") || message.startsWith("READONLY ") || message.contains("-OOM ")
							|| message.contains("-READONLY "))) {
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
			this.<Long>executeAsync(Scripts.RELEASE, ScriptOutputType.INTEGER, keyOf(key), RecordLayout.token(token))
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
			if (ex instanceof RedisCommandTimeoutException || ex instanceof java.io.IOException
					|| (ex instanceof RedisException && ex.getMessage() != null
							&& ex.getMessage().startsWith("Connection closed"))) {
				return true;
			}
		}
		return false;
	}

	private ClaimResult claimOrFail(RecordKey key, Fingerprint fingerprint, Duration lease, String token) {
		byte[] redisKey = keyOf(key);
		byte[] record = claimRecord(token, fingerprint);
		if (useSetClaims()) {
			ClaimResult claimed = executeAndWait((connection) -> setClaim(connection, redisKey, record, lease, token),
					(ClaimResult r) -> r instanceof ClaimResult.Acquired);
			if (claimed != null) {
				return claimed;
			}
		}
		List<?> reply = executeAndWait(Scripts.CLAIM, ReturnType.MULTI,
				(List<?> r) -> r != null && !r.isEmpty() && r.get(0).equals(1L), redisKey, record, expiry(lease),
				REMEMBERED_MILLIS);
		return claimResult(reply, token);
	}

	/**
	 * The native claim on {@code connection}, or {@code null} when the script must
	 * decide.
	 */
	private @Nullable ClaimResult setClaim(RedisConnection connection, byte[] key, byte[] record, Duration lease,
			String token) {
		// A pipelined or queued connection answers null, which would read as acquired.
		Assert.state(!connection.isPipelined() && !connection.isQueueing(), "Claims need a connection that answers");
		byte[] previous;
		try {
			previous = connection.stringCommands()
				.setGet(key, record, Expiration.milliseconds(expiryMillis(lease)),
						RedisStringCommands.SetOption.SET_IF_ABSENT);
		}
		catch (RuntimeException ex) {
			if (isSetClaimRefused(ex)) {
				return null;
			}
			throw ex;
		}
		setClaimsAccepted();
		if (previous != null && RecordLayout.isTombstone(previous)) {
			return null;
		}
		if (isHeldByAnother(previous, record)) {
			Long pttl = connection.keyCommands().pTtl(key);
			if (pttl != null && isLeaseOver(previous, pttl)) {
				return null;
			}
			return inProgress(previous, (pttl != null) ? pttl : 0);
		}
		return setClaimResult(previous, token);
	}

	/**
	 * Whether the placeholder a native claim found, whose key has {@code pttl} left, no
	 * longer holds its lease (or has gone since), so that the claim script may take the
	 * key over: it decides again, atomically, on what is there then. A placeholder of the
	 * previous layout expires with its lease and is never over while it is there.
	 */
	private static boolean isLeaseOver(byte[] previous, long pttl) {
		return RecordLayout.isRemembered(previous) && pttl != -1 && pttl <= REMEMBERED_MILLIS_VALUE;
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
				Duration.ofMillis(RecordLayout.leaseMillis(previous, pttlMillis)));
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
			return new ClaimResult.Damaged(damage);
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
	 * Whether the server refused a native claim that the script can make instead: a
	 * record of the previous layout (WRONGTYPE, this key only), or a server (or proxy)
	 * that does not know {@code SET} with {@code NX} and {@code GET}, such as Redis
	 * before 7.0: then claims take the script for 10 minutes. Any other error (a full or
	 * read-only server, a timeout) is the caller's.
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
		if (state == Scripts.ACQUIRED) {
			return acquired(token, reply);
		}
		if (state == Scripts.NOT_A_RECORD) {
			return new ClaimResult.Damaged(notARecord(reply.get(1)));
		}
		if (state == Scripts.IN_PROGRESS || state == Scripts.COMPLETED) {
			byte[] stored = (byte[]) reply.get(1);
			String damage = RecordLayout.damage(stored);
			if (damage != null) {
				return new ClaimResult.Damaged(damage);
			}
			return (state == Scripts.IN_PROGRESS)
					? new ClaimResult.InProgress(RecordLayout.fingerprint(stored),
							Duration.ofMillis(Math.max(0, (Long) reply.get(2))))
					: new ClaimResult.Completed(RecordLayout.fingerprint(stored),
							new StoredResult(RecordLayout.result(stored)));
		}
		// A record of the previous layout, a hash: its fingerprint as text, its result
		// as it was stored. A hash without them is not one.
		byte[] fingerprint = (byte[]) reply.get(1);
		if (fingerprint == null || fingerprint.length == 0) {
			return new ClaimResult.Damaged("it is a hash without the fingerprint field (f) of the previous layout");
		}
		Fingerprint stored = new Fingerprint(new String(fingerprint, StandardCharsets.UTF_8));
		if (state == Scripts.IN_PROGRESS_HASH) {
			return new ClaimResult.InProgress(stored, Duration.ofMillis(Math.max(0, (Long) reply.get(2))));
		}
		byte[] result = (reply.size() > 2) ? (byte[]) reply.get(2) : null;
		if (result == null) {
			return new ClaimResult.Damaged("it is a hash without the result field (r) of the previous layout");
		}
		return new ClaimResult.Completed(stored, new StoredResult(result));
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
	 * The damage of a key that holds a value of another Redis type than a string or a
	 * hash, named by the scripts' {@code TYPE}.
	 */
	private static String notARecord(@Nullable Object type) {
		String name = (type instanceof byte[] bytes) ? new String(bytes, StandardCharsets.UTF_8) : String.valueOf(type);
		return "it is a Redis " + name + ", not a string (WRONGTYPE)";
	}

	@Override
	public boolean complete(RecordKey key, String token, Fingerprint fingerprint, StoredResult result, Duration ttl) {
		byte[] owner = RecordLayout.token(token);
		return isPositive(executeAndWait(Scripts.COMPLETE, ReturnType.INTEGER, RedisIdempotencyStore::isPositive,
				keyOf(key), owner, completedRecord(owner, fingerprint, result), millis(ttl)));
	}

	@Override
	public boolean release(RecordKey key, String token) {
		return isPositive(
				executeAndWait(Scripts.RELEASE, ReturnType.INTEGER, null, keyOf(key), RecordLayout.token(token)));
	}

	@Override
	public boolean renew(RecordKey key, String token, Fingerprint fingerprint, Duration lease) {
		byte[] owner = RecordLayout.token(token);
		// The record is written only if it has vanished: then it is claimed anew, now.
		// A record written anew has lost its count: it is attempt 1 again (a takeover of
		// it
		// still knows it takes over, and when it was written).
		return isPositive(executeAndWait(Scripts.RENEW, ReturnType.INTEGER, null, keyOf(key), owner, expiry(lease),
				RecordLayout.inProgress(owner, fingerprint, Instant.now().getEpochSecond())));
	}

	@Override
	public Optional<IdempotencyRecord> inspect(RecordKey key) {
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			return Optional.ofNullable(inspect(connection, key, Instant.now()));
		}
	}

	private static @Nullable IdempotencyRecord inspect(RedisConnection connection, RecordKey key, Instant now) {
		return inspection(key, execute(connection, Scripts.INSPECT, ReturnType.MULTI, keyOf(key)), now);
	}

	private static @Nullable IdempotencyRecord inspection(RecordKey key, @Nullable List<?> reply, Instant now) {
		Assert.state(reply != null && !reply.isEmpty(), "Empty reply from the inspect script");
		long kind = (Long) reply.get(0);
		if (kind == 0) {
			return null;
		}
		long pttl = (Long) reply.get(1);
		Duration expiresIn = (pttl >= 0) ? Duration.ofMillis(pttl) : null;
		if (kind == 3) {
			return IdempotencyRecord.unreadable(key, notARecord(reply.get(2)), expiresIn);
		}
		if (kind == 1) {
			byte[] stored = (byte[]) reply.get(2);
			if (RecordLayout.isTombstone(stored)) {
				// A forced delete: no call holds the key, and nothing is stored.
				return null;
			}
			String damage = RecordLayout.damage(stored);
			if (damage != null) {
				return IdempotencyRecord.unreadable(key, damage, expiresIn);
			}
			boolean inProgress = RecordLayout.isInProgress(stored);
			if (inProgress && expiresIn != null) {
				// The lease left, not the hour the placeholder is kept after it: 0 for
				// a call whose lease ran out, which no longer holds the key.
				expiresIn = Duration.ofMillis(RecordLayout.leaseMillis(stored, pttl));
			}
			return new IdempotencyRecord(key,
					inProgress ? IdempotencyRecord.State.IN_PROGRESS : IdempotencyRecord.State.COMPLETED,
					RecordLayout.fingerprint(stored), RecordLayout.claimedAt(stored, now), expiresIn,
					inProgress ? null : new StoredResult(RecordLayout.result(stored)));
		}
		// A hash of the previous layout: no claim time.
		boolean inProgress = "P".equals(new String((byte[]) reply.get(2), StandardCharsets.UTF_8));
		byte[] storedFingerprint = (byte[]) reply.get(3);
		if (storedFingerprint.length == 0) {
			return IdempotencyRecord.unreadable(key,
					"it is a hash without the fingerprint field (f) of the previous layout", expiresIn);
		}
		Fingerprint fingerprint = new Fingerprint(new String(storedFingerprint, StandardCharsets.UTF_8));
		StoredResult result = (!inProgress && reply.size() > 4) ? new StoredResult((byte[]) reply.get(4)) : null;
		return new IdempotencyRecord(key,
				inProgress ? IdempotencyRecord.State.IN_PROGRESS : IdempotencyRecord.State.COMPLETED, fingerprint, null,
				expiresIn, result);
	}

	/**
	 * SCAN with a MATCH on the key prefix and a COUNT of {@code limit}, then one read per
	 * key found. On Redis Cluster each primary is scanned in turn (the cursor names the
	 * node); a page covers one node's SCAN step. Needs Lettuce: Spring Data Redis's
	 * cursor cannot resume a scan from a cursor that an earlier request returned.
	 */
	@Override
	@SuppressWarnings("unchecked")
	public InProgressPage findInProgress(String keyPrefix, Duration olderThan, @Nullable String cursor, int limit) {
		Assert.hasText(keyPrefix, "keyPrefix must not be empty");
		Assert.isTrue(limit > 0, "limit must be positive");
		ScanArgs args = new ScanArgs().match(utf8(globEscape(keyPrefix) + ":*")).limit(limit);
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			Object nativeConnection = connection.getNativeConnection();
			KeyScanCursor<byte[]> scanned;
			String node = null;
			List<String> primaries = List.of();
			if (nativeConnection instanceof RedisAdvancedClusterAsyncCommands<?, ?> cluster) {
				primaries = primaries((RedisAdvancedClusterAsyncCommands<byte[], byte[]>) cluster);
				String position = (cursor != null) ? cursor : primaries.get(0) + ":0";
				int colon = position.lastIndexOf(':');
				Assert.isTrue(colon > 0, "Not a cursor of this store: " + position);
				node = position.substring(0, colon);
				scanned = await(((RedisAdvancedClusterAsyncCommands<byte[], byte[]>) cluster).getConnection(node)
					.scan(ScanCursor.of(position.substring(colon + 1)), args));
			}
			else if (nativeConnection instanceof RedisClusterAsyncCommands<?, ?> commands) {
				scanned = await(((RedisClusterAsyncCommands<byte[], byte[]>) commands)
					.scan(ScanCursor.of((cursor != null) ? cursor : "0"), args));
			}
			else {
				throw new UnsupportedOperationException(
						"Finding the records in progress needs a LettuceConnectionFactory");
			}
			Instant now = Instant.now();
			List<IdempotencyRecord> records = new ArrayList<>();
			for (byte[] key : scanned.getKeys()) {
				IdempotencyRecord record = inspect(connection, new RecordKey(new String(key, StandardCharsets.UTF_8)),
						now);
				// An unreadable record may be a call in progress as well as anything
				// else:
				// listed, so that an operator sees it, whatever its age.
				if (record != null && record.state() == IdempotencyRecord.State.UNREADABLE) {
					records.add(record);
				}
				else if (record != null && record.state() == IdempotencyRecord.State.IN_PROGRESS) {
					Duration age = record.age(now);
					if (age == null || age.compareTo(olderThan) >= 0) {
						records.add(record);
					}
				}
			}
			return new InProgressPage(records, nextCursor(scanned, node, primaries));
		}
	}

	private static @Nullable String nextCursor(KeyScanCursor<byte[]> scanned, @Nullable String node,
			List<String> primaries) {
		if (node == null) {
			return scanned.isFinished() ? null : scanned.getCursor();
		}
		if (!scanned.isFinished()) {
			return node + ":" + scanned.getCursor();
		}
		int next = primaries.indexOf(node) + 1;
		return (next > 0 && next < primaries.size()) ? primaries.get(next) + ":0" : null;
	}

	private static List<String> primaries(RedisAdvancedClusterAsyncCommands<byte[], byte[]> cluster) {
		List<String> primaries = new ArrayList<>();
		for (io.lettuce.core.cluster.models.partitions.RedisClusterNode node : cluster.getStatefulConnection()
			.getPartitions()) {
			if (node.is(io.lettuce.core.cluster.models.partitions.RedisClusterNode.NodeFlag.UPSTREAM)) {
				primaries.add(node.getNodeId());
			}
		}
		Collections.sort(primaries);
		Assert.state(!primaries.isEmpty(), "The Redis Cluster has no primary");
		return primaries;
	}

	private static <T> T await(RedisFuture<T> reply) {
		try {
			return reply.get();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while scanning Redis", ex);
		}
		catch (ExecutionException ex) {
			throw (ex.getCause() instanceof RuntimeException runtime) ? runtime
					: new IllegalStateException("Could not scan Redis", ex.getCause());
		}
	}

	/**
	 * The prefix with the characters that a MATCH pattern interprets escaped.
	 */
	private static String globEscape(String text) {
		StringBuilder sb = new StringBuilder(text.length() + 4);
		for (int i = 0; i < text.length(); i++) {
			char c = text.charAt(i);
			if ("*?[]\\".indexOf(c) >= 0) {
				sb.append('\\');
			}
			sb.append(c);
		}
		return sb.toString();
	}

	@Override
	public boolean delete(RecordKey key) {
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			Long deleted = connection.keyCommands().del(keyOf(key));
			return deleted != null && deleted > 0;
		}
	}

	@Override
	public Deletion deleteInProgress(RecordKey key) {
		return deleteIf(key, RecordLayout.IN_PROGRESS);
	}

	@Override
	public Deletion deleteUnlessHeld(RecordKey key) {
		return deleteIf(key, RecordLayout.COMPLETED);
	}

	private Deletion deleteIf(RecordKey key, byte state) {
		Long reply = executeAndWait(Scripts.DELETE_IF, ReturnType.INTEGER, null, keyOf(key), new byte[] { state },
				REMEMBERED_MILLIS);
		if (reply == null || reply == 0) {
			return Deletion.NONE;
		}
		if (reply == 1) {
			return Deletion.DELETED;
		}
		return (reply == 2) ? Deletion.HELD : Deletion.COMPLETED;
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
		return this.waitReplicas == 0 && this.connectionFactory instanceof LettuceConnectionFactory;
	}

	@Override
	public CompletionStage<ClaimResult> claimAsync(RecordKey key, Fingerprint fingerprint, Duration lease) {
		String token = newToken();
		return claimOrFailAsync(key, fingerprint, lease, token).exceptionallyCompose((failure) -> {
			Throwable ex = (failure instanceof CompletionException && failure.getCause() != null) ? failure.getCause()
					: failure;
			if (!isWriteRefusal(ex)) {
				if (isUnanswered(ex)) {
					releaseUnanswered(key, token);
				}
				return CompletableFuture.failedFuture(ex);
			}
			// As claim() does: read what the key holds, on the event loop's terms.
			return this.<List<Object>>executeAsync(Scripts.INSPECT, ScriptOutputType.MULTI, keyOf(key))
				.handle((reply, readFailure) -> {
					ClaimResult found = (readFailure != null) ? null
							: whileWritesAreRefused(inspection(key, reply, Instant.now()));
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

	private CompletableFuture<ClaimResult> claimOrFailAsync(RecordKey key, Fingerprint fingerprint, Duration lease,
			String token) {
		byte[] redisKey = keyOf(key);
		byte[] record = claimRecord(token, fingerprint);
		byte[][] keys = { redisKey };
		byte[][] args = { record, expiry(lease), REMEMBERED_MILLIS };
		if (!useSetClaims()) {
			return this.<List<Object>>executeAsync(Scripts.CLAIM, ScriptOutputType.MULTI, redisKey, args)
				.thenApply((reply) -> claimResult(reply, token));
		}
		// Everything on one connection's commands, closed once: a fallback never borrows
		// another connection on Lettuce's event loop.
		return withAsyncCommands(
				(commands) -> commands.setGet(redisKey, record, SetArgs.Builder.nx().px(expiryMillis(lease)))
					.toCompletableFuture()
					.handle((previous, ex) -> {
						if (ex != null) {
							if (isSetClaimRefused(ex)) {
								return this
									.<List<Object>>eval(commands, Scripts.CLAIM, ScriptOutputType.MULTI, keys, args)
									.thenApply((reply) -> claimResult(reply, token));
							}
							return CompletableFuture.<ClaimResult>failedFuture(
									(ex instanceof CompletionException && ex.getCause() != null) ? ex.getCause() : ex);
						}
						setClaimsAccepted();
						if (previous != null && RecordLayout.isTombstone(previous)) {
							// Taken over by the claim script, which decides again
							// on what is there now.
							return this.<List<Object>>eval(commands, Scripts.CLAIM, ScriptOutputType.MULTI, keys, args)
								.thenApply((reply) -> claimResult(reply, token));
						}
						if (isHeldByAnother(previous, record)) {
							return commands.pttl(redisKey).toCompletableFuture().thenCompose((pttl) -> {
								if (pttl != null && isLeaseOver(previous, pttl)) {
									return this
										.<List<Object>>eval(commands, Scripts.CLAIM, ScriptOutputType.MULTI, keys, args)
										.thenApply((reply) -> claimResult(reply, token));
								}
								return CompletableFuture
									.completedFuture(inProgress(previous, (pttl != null) ? pttl : 0));
							});
						}
						return CompletableFuture.completedFuture(setClaimResult(previous, token));
					})
					.thenCompose(Function.identity()));
	}

	@Override
	public CompletionStage<Boolean> completeAsync(RecordKey key, String token, Fingerprint fingerprint,
			StoredResult result, Duration ttl) {
		byte[] owner = RecordLayout.token(token);
		return this
			.<Long>executeAsync(Scripts.COMPLETE, ScriptOutputType.INTEGER, keyOf(key), owner,
					completedRecord(owner, fingerprint, result), millis(ttl))
			.thenApply(RedisIdempotencyStore::isPositive);
	}

	@Override
	public CompletionStage<Boolean> releaseAsync(RecordKey key, String token) {
		return this.<Long>executeAsync(Scripts.RELEASE, ScriptOutputType.INTEGER, keyOf(key), RecordLayout.token(token))
			.thenApply(RedisIdempotencyStore::isPositive);
	}

	/**
	 * {@link #executeAndWait} through Lettuce's asynchronous commands: EVALSHA, then EVAL
	 * on NOSCRIPT. The Spring connection is closed once the reply is in, not before: with
	 * a pool, closing it hands the native connection to another caller.
	 */
	private <T> CompletableFuture<T> executeAsync(Script script, ScriptOutputType outputType, byte[] key,
			byte[]... args) {
		byte[][] keys = { key };
		return withAsyncCommands((commands) -> eval(commands, script, outputType, keys, args));
	}

	private <T> CompletableFuture<T> eval(RedisClusterAsyncCommands<byte[], byte[]> commands, Script script,
			ScriptOutputType outputType, byte[][] keys, byte[]... args) {
		return commands.<T>evalsha(script.sha1(), outputType, keys, args)
			.toCompletableFuture()
			.exceptionallyCompose((ex) -> isNoScript(ex)
					? commands.<T>eval(script.text(), outputType, keys, args).toCompletableFuture()
					: CompletableFuture.failedFuture(ex));
	}

	/**
	 * Runs {@code action} on Lettuce's asynchronous commands of a connection from the
	 * factory, closed once the reply is in.
	 */
	@SuppressWarnings("unchecked")
	private <T> CompletableFuture<T> withAsyncCommands(
			Function<RedisClusterAsyncCommands<byte[], byte[]>, CompletableFuture<T>> action) {
		RedisConnection connection = this.connectionFactory.getConnection();
		CompletableFuture<T> reply;
		try {
			reply = action.apply((RedisClusterAsyncCommands<byte[], byte[]>) connection.getNativeConnection());
		}
		catch (RuntimeException ex) {
			connection.close();
			return CompletableFuture.failedFuture(ex);
		}
		return reply.whenComplete((value, ex) -> connection.close());
	}

	/**
	 * Runs a script on its one key; then, if the script wrote ({@code wrote},
	 * {@code null} for scripts that need no replica) and replicas are awaited, WAIT. WAIT
	 * counts the writes of the connection it is sent on and blocks that connection until
	 * it returns, so a script that may be awaited runs on a dedicated connection, held by
	 * this caller from the script to the end of its WAIT; all others run on the
	 * application's (usually shared) connection. Straight on the connection rather than
	 * through {@code RedisTemplate}, which wraps the connection in a JDK proxy and calls
	 * it by reflection on every command.
	 */
	private <T> T executeAndWait(Script script, ReturnType returnType, @Nullable Predicate<T> wrote,
			byte[]... keyAndArgs) {
		return executeAndWait((connection) -> execute(connection, script, returnType, keyAndArgs), wrote);
	}

	private <T> T executeAndWait(Function<RedisConnection, T> action, @Nullable Predicate<T> wrote) {
		DedicatedConnections dedicated = this.dedicatedConnections;
		if (dedicated == null || wrote == null) {
			try (RedisConnection connection = this.connectionFactory.getConnection()) {
				return action.apply(connection);
			}
		}
		StatefulRedisConnection<byte[], byte[]> nativeConnection = dedicated.borrow();
		boolean reusable = false;
		try {
			T reply;
			try (RedisConnection connection = dedicated.asRedisConnection(nativeConnection)) {
				reply = action.apply(connection);
			}
			reusable = !wrote.test(reply) || awaitReplicas(nativeConnection);
			return reply;
		}
		finally {
			dedicated.giveBack(nativeConnection, reusable);
		}
	}

	/**
	 * Runs a script by SHA (EVALSHA), sending its text (EVAL) only when the server does
	 * not know it yet, after a restart or a SCRIPT FLUSH.
	 */
	@SuppressWarnings("unchecked")
	private static <T> T execute(RedisConnection connection, Script script, ReturnType returnType,
			byte[]... keyAndArgs) {
		RedisScriptingCommands scripting = connection.scriptingCommands();
		try {
			return (T) scripting.evalSha(script.sha1(), returnType, 1, keyAndArgs);
		}
		catch (RuntimeException ex) {
			if (!isNoScript(ex)) {
				throw ex;
			}
			return (T) scripting.eval(script.text(), returnType, 1, keyAndArgs);
		}
	}

	private static boolean isNoScript(Throwable ex) {
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			if (cause.getMessage() != null && cause.getMessage().contains("NOSCRIPT")) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Sends WAIT on the connection that wrote (Spring Data Redis has no WAIT, and its
	 * generic execute() cannot read an integer reply). The write has happened either way:
	 * too few acknowledgements, or none in time, are logged, not thrown.
	 * @return whether the connection has no command pending any more and can be reused
	 */
	private boolean awaitReplicas(StatefulRedisConnection<byte[], byte[]> connection) {
		RedisFuture<Long> reply = connection.async().waitForReplication(this.waitReplicas, this.waitTimeout.toMillis());
		Long acknowledged;
		try {
			// Redis answers WAIT by its timeout; later than that plus a command's timeout
			// it does not answer at all.
			acknowledged = reply.get(this.waitTimeout.plus(connection.getTimeout()).toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
		catch (ExecutionException | TimeoutException ex) {
			logger.warn("Could not confirm that " + this.waitReplicas + " Redis replicas have an idempotency record; "
					+ "a failover now could lose it: " + ex);
			return false;
		}
		if (acknowledged != null && acknowledged < this.waitReplicas) {
			logger.warn("Only " + acknowledged + " of " + this.waitReplicas + " Redis replicas acknowledged an "
					+ "idempotency record within " + this.waitTimeout + "; a failover now could lose it");
		}
		return true;
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

	/**
	 * The Lua scripts and their SHA-1, computed once.
	 */
	static final class Scripts {

		static final long ACQUIRED = 1;

		static final long IN_PROGRESS = 2;

		static final long COMPLETED = 3;

		static final long IN_PROGRESS_HASH = 4;

		static final long COMPLETED_HASH = 5;

		static final long NOT_A_RECORD = 6;

		// A record is one string (RecordLayout): byte 1 the state, 'P' or 'p' in
		// progress, 'C' or 'c' completed (upper or lower case: the form of the
		// fingerprint, which only the Java side reads), bytes 2-9 the owner's token.
		// Java builds the values the scripts write, so a script compares a state byte and
		// a token and writes or returns a value whole: GET and one SET (with PX) or
		// PEXPIRE per call. The only bytes a script reads or writes besides are the
		// fixed-size end of a placeholder (its attempt and claim times, 7 bytes after
		// the fingerprint) and the 9 bytes of a tombstone, when a key is taken over or
		// deleted by an operator; the fingerprint's length byte says where it ends.
		//
		// Records written before this layout are hashes (s, t, f, r): GET on them fails
		// with WRONGTYPE, caught by pcall, so a new record costs no TYPE check. Those
		// records are read as they are; their owner runs the previous version, whose
		// 32-hex-digit token can never equal an 8-byte one here, so complete, release
		// and renew find them fenced (0) and leave them to it. A value of any other type
		// (a list, a set) is no record at all: the claim answers 6 and its type, and
		// leaves it as it is, as it leaves a string it cannot read (the Java side judges
		// that): either may be what is left of a call that ran.
		//
		// A placeholder of this layout ends with 7 bytes after its fingerprint: its claim
		// time (3), its attempt (1) and the claim time of the attempt it took over (3,
		// zero if none or unknown); its key expires ARGV[3] ms (RecordLayout.REMEMBERED)
		// after its lease, so that the lease left is PTTL - ARGV[3]. A placeholder that
		// ends otherwise (3 bytes: the previous layout, written by instances of the
		// previous version during a rolling upgrade; none: earlier) expires with its
		// lease: PTTL is its lease, and it is never found with its lease run out.
		//
		// A placeholder whose lease ran out is taken over: its owner died or hangs, and
		// nobody else holds the key. The new placeholder is attempt n + 1, and the claim
		// answers its number and when attempt n was claimed, so the method can look for
		// what that attempt did. Its owner is fenced from then on by the new token, as
		// before; an owner past its lease that nobody took over still renews and
		// completes (its token still holds).
		//
		// A tombstone ('D', 68, and 8 bytes: 'tomb', the claim time and the attempt of a
		// placeholder an operator deleted; or the deleted owner's token, written by the
		// previous version) is a call that never finished too: the claim takes it over
		// as the next attempt (2, when unknown), GET and SET in one script, so of two
		// claimers that both saw it only the first wins, the second finds its
		// placeholder.
		//
		// A claim sent again for the same token finds its own placeholder and wins, with
		// the attempt the first send wrote: Lettuce sends a command again on the new
		// connection when the old one broke before the reply (at-least-once), and the
		// first send may have run.
		// ARGV: the placeholder of a first attempt, its key's expiry in ms (the lease
		// plus ARGV[3]), ARGV[3] the ms a placeholder is kept after its lease.
		// Answers {1} for a first attempt, {1, attempt, claim time of the last} after a
		// takeover, {2, record, lease left in ms}, {3, value} for Java to judge.
		static final Script CLAIM = Script.of("""
				local v = redis.pcall('GET', KEYS[1])
				if not v then
				  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
				  return {1}
				end
				if type(v) == 'table' then
				  local t = redis.call('TYPE', KEYS[1])['ok']
				  if t ~= 'hash' then
				    return {6, t}
				  end
				  local r = redis.call('HMGET', KEYS[1], 's', 'f', 'r')
				  if r[1] == 'P' then
				    return {4, r[2], redis.call('PTTL', KEYS[1])}
				  end
				  return {5, r[2], r[3]}
				end
				-- ARGV[1] with its attempt and the last attempt's claim time (its last 4
				-- bytes) written anew: the count goes on from takeover to takeover.
				local function takeOver(n, started)
				  n = math.min(n, 255)
				  redis.call('SET', KEYS[1], string.sub(ARGV[1], 1, -5) .. string.char(n) .. started, 'PX', ARGV[2])
				  return {1, n, started}
				end
				local s = string.byte(v)
				if s == 68 and #v == 9 then
				  if string.sub(v, 2, 5) == 'tomb' then
				    return takeOver(string.byte(v, 9) + 1, string.sub(v, 6, 8))
				  end
				  return takeOver(2, string.char(0, 0, 0))
				end
				if s == 80 or s == 112 then
				  -- Bytes after the fingerprint (32 bytes for 'P', a length byte and text
				  -- for 'p'); -1 for a value too short to have one, which Java calls damaged.
				  local rest = -1
				  if #v >= 10 then
				    rest = #v - 9 - ((s == 80) and 32 or (1 + string.byte(v, 10)))
				  end
				  if string.sub(v, 2, 9) == string.sub(ARGV[1], 2, 9) then
				    if rest == 7 then
				      return {1, string.byte(v, -4), string.sub(v, -3)}
				    end
				    return {1}
				  end
				  local ttl = redis.call('PTTL', KEYS[1])
				  if rest == 7 and ttl >= 0 then
				    local lease = ttl - tonumber(ARGV[3])
				    if lease <= 0 then
				      return takeOver(string.byte(v, -4) + 1, string.sub(v, -7, -5))
				    end
				    return {2, v, lease}
				  end
				  return {2, v, ttl}
				end
				return {3, v}
				""");

		// Fencing: only the holder of the token may complete, release or renew. A
		// record that expired with nobody claiming it since is written anew by its
		// owner (2): only a take-over, which writes another token, makes the owner lose
		// (0). A completed record keeps the token of the owner that completed it, so
		// that the same completion sent again (after a broken connection, as above)
		// finds the very value it would write and succeeds instead of reporting a lost
		// lease; nothing else can change it. A tombstone (an operator's forced delete) is
		// no vanished record: its owner is fenced (0) like any other (no token equals
		// its bytes 2-9: 'tomb' and an attempt, or the previous version's copy of the
		// deleted token, which COMPLETE still refuses since the state is no 'P'), so the
		// key stays free for a retry and never gets the deleted call's result. RELEASE
		// and RENEW fence it the same way: neither writes over a value. A placeholder
		// past its lease is still its owner's until someone takes it over: COMPLETE,
		// RELEASE and RENEW do not look at the lease.
		// ARGV: the token (8 bytes), the completed record, the TTL in ms.
		static final Script COMPLETE = Script.of("""
				local v = redis.pcall('GET', KEYS[1])
				if not v then
				  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
				  return 2
				end
				if type(v) == 'table' or string.sub(v, 2, 9) ~= ARGV[1] then
				  return 0
				end
				local s = string.byte(v)
				if s == 80 or s == 112 then
				  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
				  return 1
				end
				if v == ARGV[2] then
				  return 1
				end
				return 0
				""");

		// A released first attempt is deleted: the key is free, and the next claim is
		// attempt 1 again. A released takeover (a placeholder of this layout whose
		// attempt is above 1) is replaced by the tombstone of its own attempt and claim
		// time instead, as a forced delete writes it, for as long as the placeholder
		// would have lived (PTTL: the lease left, then the time it is kept after it):
		// deleting it would erase what only it still remembers, that an earlier attempt
		// never finished, and the next claim, told it is attempt 1, would skip its
		// lookup and repeat that attempt's side effects. The tombstone fences the owner
		// as a forced delete's does.
		// ARGV: the token (8 bytes).
		static final Script RELEASE = Script.of("""
				local v = redis.pcall('GET', KEYS[1])
				if not v then
				  return 2
				end
				if type(v) == 'table' then
				  return 0
				end
				local s = string.byte(v)
				if (s == 80 or s == 112) and string.sub(v, 2, 9) == ARGV[1] then
				  local rest = -1
				  if #v >= 10 then
				    rest = #v - 9 - ((s == 80) and 32 or (1 + string.byte(v, 10)))
				  end
				  if rest == 7 and string.byte(v, -4) > 1 then
				    local ttl = redis.call('PTTL', KEYS[1])
				    if ttl > 0 then
				      redis.call('SET', KEYS[1], 'Dtomb' .. string.sub(v, -7, -5) .. string.sub(v, -4, -4), 'PX', ttl)
				      return 1
				    end
				  end
				  redis.call('DEL', KEYS[1])
				  return 1
				end
				return 0
				""");

		// For operators. ARGV[1] 'P' deletes a record in progress and keeps a completed
		// one (3); 'C' deletes a completed one, and one in progress whose lease ran out,
		// and keeps one in progress under its lease (2), which is held. 1 deleted, 0
		// none. ARGV[2]: the ms a placeholder of this layout is kept after its lease (as
		// for CLAIM: 7 bytes after the fingerprint; one of the previous layout expires
		// with its lease, so while it is there it is held).
		//
		// A placeholder is replaced by a tombstone, not deleted: its owner, if alive,
		// renews within a third of the lease, and would otherwise write the vanished
		// record anew (the owner of a record that expired does so), undoing the deletion.
		// The tombstone makes that renewal, and the owner's completion, fail. It keeps
		// the placeholder's attempt and claim time ('D', 'tomb', 3 bytes, 1 byte: 9
		// bytes, as the previous version's tombstone, which that version takes as free),
		// so that the next claim knows it takes over an attempt that never finished, and
		// lives as long as the placeholder would have (the lease left, then ARGV[2]). A
		// tombstone is no record: left alone (0). A record in progress of the previous
		// layouts, a hash, is deleted: its owner runs a version that knows no tombstone.
		// A value too short to be a placeholder is deleted: a tombstone of it would say
		// nothing true.
		static final Script DELETE_IF = Script.of("""
				local v = redis.pcall('GET', KEYS[1])
				if not v then
				  return 0
				end
				if type(v) == 'table' then
				  local inProgress = (redis.pcall('HGET', KEYS[1], 's') == 'P')
				  if inProgress == (ARGV[1] == 'P') then
				    redis.call('DEL', KEYS[1])
				    return 1
				  end
				  if inProgress then
				    return 2
				  end
				  return 3
				end
				local s = string.byte(v)
				if s == 68 and #v == 9 then
				  return 0
				end
				if s ~= 80 and s ~= 112 then
				  if ARGV[1] == 'C' then
				    redis.call('DEL', KEYS[1])
				    return 1
				  end
				  return 3
				end
				local rest = -1
				if #v >= 10 then
				  rest = #v - 9 - ((s == 80) and 32 or (1 + string.byte(v, 10)))
				end
				local ttl = redis.call('PTTL', KEYS[1])
				local leaseOver = rest == 7 and ttl >= 0 and ttl <= tonumber(ARGV[2])
				if ARGV[1] == 'C' and not leaseOver then
				  return 2
				end
				local started, n, px = string.char(0, 0, 0), 1, ttl + tonumber(ARGV[2])
				if rest == 7 then
				  started, n, px = string.sub(v, -7, -5), string.byte(v, -4), ttl
				elseif rest == 3 then
				  started = string.sub(v, -3)
				end
				if rest < 0 or ttl < 0 or px <= 0 then
				  redis.call('DEL', KEYS[1])
				else
				  redis.call('SET', KEYS[1], 'Dtomb' .. started .. string.char(n), 'PX', px)
				end
				return 1
				""");

		// A record completed under the renewing token (3) is still this owner's: a
		// completion whose reply was lost landed, and the renewal between its attempts
		// must not report the key as taken from it. Nothing is written then.
		// ARGV: the token (8 bytes), the key's expiry in ms (the lease, then the time a
		// placeholder is kept after it), the in-progress record.
		static final Script RENEW = Script.of("""
				local v = redis.pcall('GET', KEYS[1])
				if not v then
				  redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[2])
				  return 2
				end
				if type(v) == 'table' then
				  return 0
				end
				local s = string.byte(v)
				if (s == 80 or s == 112) and string.sub(v, 2, 9) == ARGV[1] then
				  redis.call('PEXPIRE', KEYS[1], ARGV[2])
				  return 1
				end
				if (s == 67 or s == 99) and string.sub(v, 2, 9) == ARGV[1] then
				  return 3
				end
				return 0
				""");

		// Read-only, for operators: the record whole, or a hash of the previous layout's
		// fields, or the type of a value that is neither, with its PTTL (Java tells the
		// lease left of a placeholder from it).
		static final Script INSPECT = Script.of("""
				local v = redis.pcall('GET', KEYS[1])
				if not v then
				  return {0}
				end
				if type(v) == 'table' then
				  local t = redis.call('TYPE', KEYS[1])['ok']
				  if t ~= 'hash' then
				    return {3, redis.call('PTTL', KEYS[1]), t}
				  end
				  local r = redis.call('HMGET', KEYS[1], 's', 'f', 'r')
				  return {2, redis.call('PTTL', KEYS[1]), r[1] or '', r[2] or '', r[3]}
				end
				return {1, redis.call('PTTL', KEYS[1]), v}
				""");

		private Scripts() {
		}

	}

	/**
	 * A script's text and the SHA-1 that EVALSHA names it by.
	 */
	record Script(byte[] text, String sha1) {

		static Script of(String text) {
			return new Script(utf8(text), RedisScript.of(text).getSha1());
		}

	}

}
