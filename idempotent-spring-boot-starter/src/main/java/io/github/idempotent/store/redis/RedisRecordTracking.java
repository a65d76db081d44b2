package io.github.idempotent.store.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisConnectionStateListener;
import io.lettuce.core.StatefulRedisConnectionImpl;
import io.lettuce.core.TrackingArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.api.push.PushListener;
import io.lettuce.core.api.push.PushMessage;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.protocol.ProtocolVersion;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.jspecify.annotations.Nullable;

import org.springframework.context.SmartLifecycle;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.util.Assert;

import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.RecordTracking;
import io.github.idempotent.store.StoredResult;

/**
 * {@link RecordTracking} with Redis's server-assisted client-side caching: a RESP3
 * connection of its own with {@code CLIENT TRACKING ON}, on which Redis pushes an
 * {@code invalidate} for every key read there that changes. Replies and pushes come in
 * order, and Lettuce hands pushes on before it completes a later reply: a PING sent at
 * {@code t} and answered proves every change before {@code t} reported, so
 * {@link #isCurrent()} holds while the latest answered PING is younger than
 * {@code maxStaleness}. A broken connection is replaced at once, never left to Lettuce's
 * reconnect (which would come back untracked). Needs Lettuce on a standalone or Sentinel
 * Redis 6+.
 */
final class RedisRecordTracking implements RecordTracking, SmartLifecycle {

	private static final Log logger = LogFactory.getLog(RedisRecordTracking.class);

	private static final Duration MIN_RECONNECT_AFTER = Duration.ofSeconds(2);

	private final RedisConnectionFactory connectionFactory;

	private final long maxStalenessNanos;

	private final long heartbeatMillis;

	private final long reconnectAfterNanos;

	private final @Nullable ScheduledExecutorService scheduler;

	private volatile @Nullable Session session;

	private volatile @Nullable Listener listener;

	private volatile @Nullable String unavailableReason;

	private volatile boolean stopped;

	/**
	 * {@code reconnectAfter} {@code null}: ten times {@code maxStaleness}, at least 2 s.
	 */
	RedisRecordTracking(RedisConnectionFactory connectionFactory, @Nullable Duration maxStaleness,
			@Nullable Duration reconnectAfter) {
		Assert.isTrue(maxStaleness != null && maxStaleness.toMillis() >= 10, "maxStaleness must be at least 10ms");
		this.maxStalenessNanos = maxStaleness.toNanos();
		this.heartbeatMillis = Math.max(2, maxStaleness.toMillis() / 5);
		this.reconnectAfterNanos = (reconnectAfter != null) ? reconnectAfter.toNanos()
				: Math.max(maxStaleness.multipliedBy(10).toNanos(), MIN_RECONNECT_AFTER.toNanos());
		this.connectionFactory = connectionFactory;
		if (redisClient(connectionFactory) == null) {
			this.unavailableReason = (connectionFactory instanceof LettuceConnectionFactory)
					? "Redis Cluster is not supported (keys live on many nodes and move between them)"
					: "it needs the Lettuce client, not " + connectionFactory.getClass().getName();
			this.scheduler = null;
		}
		else {
			this.scheduler = Executors
				.newSingleThreadScheduledExecutor(RedisClients.daemon("idempotent-record-tracking"));
		}
	}

	/** {@code null} on Cluster or another client; a restarted factory makes a new one. */
	private static @Nullable RedisClient redisClient(RedisConnectionFactory connectionFactory) {
		return (connectionFactory instanceof LettuceConnectionFactory lettuce
				&& lettuce.getRequiredNativeClient() instanceof RedisClient redis) ? redis : null;
	}

	@Override
	public void start(Listener listener) {
		Assert.notNull(listener, "listener must not be null");
		Assert.state(this.listener == null, "Already started");
		this.listener = listener;
		if (this.scheduler == null) {
			if (this.connectionFactory instanceof LettuceConnectionFactory) {
				logger.info("The local cache of idempotent results is off: Redis invalidation tracking is "
						+ "unavailable, " + this.unavailableReason);
			}
			return;
		}
		this.scheduler.scheduleWithFixedDelay(this::tick, 0, this.heartbeatMillis, TimeUnit.MILLISECONDS);
	}

	@Override
	public boolean isCurrent() {
		Session current = this.session;
		return current != null && !current.lost && System.nanoTime() - current.confirmedAt <= this.maxStalenessNanos;
	}

	/**
	 * Completes once every change the server made before this call has been reported.
	 * Fails when tracking is not established.
	 */
	public CompletionStage<Void> sync() {
		Session current = this.session;
		if (current == null || current.lost) {
			return CompletableFuture.failedFuture(new IllegalStateException("Tracking is not established"));
		}
		long sentAt = System.nanoTime();
		return current.connection.async().ping().toCompletableFuture().thenAccept((pong) -> {
			Assert.state(!current.lost, "Tracking was lost");
			current.confirm(sentAt);
		});
	}

	@Override
	public boolean isSupported() {
		return this.scheduler != null;
	}

	@Override
	public String trackingKey(RecordKey key) {
		// Latin-1 maps each byte to a char: pushed and read keys compare equal.
		return new String(RedisIdempotencyStore.keyOf(key), StandardCharsets.ISO_8859_1);
	}

	@Override
	public CompletionStage<RecordTracking.@Nullable TrackedRecord> read(RecordKey key) {
		Session current = this.session;
		if (current == null || current.lost) {
			return CompletableFuture.completedFuture(null);
		}
		// A closed connection fails the future: the cache catches what read throws.
		byte[] redisKey = RedisIdempotencyStore.keyOf(key);
		RedisAsyncCommands<byte[], byte[]> commands = current.connection.async();
		// PTTL: the cache drops the record when Redis would.
		CompletableFuture<byte[]> value = commands.get(redisKey).toCompletableFuture();
		CompletableFuture<Long> ttl = commands.pttl(redisKey).toCompletableFuture();
		return value.thenCombine(ttl, (stored, millis) -> {
			if (stored == null || !RecordLayout.isCompleted(stored) || RecordLayout.damage(stored) != null
					|| millis == null || millis == -2) {
				return null;
			}
			return new RecordTracking.TrackedRecord(RecordLayout.fingerprint(stored),
					new StoredResult(RecordLayout.result(stored)),
					(millis < 0) ? Duration.ofNanos(Long.MAX_VALUE) : Duration.ofMillis(millis));
		}).exceptionally((ex) -> null);
	}

	private void tick() {
		try {
			Session current = this.session;
			if (this.stopped) {
				return;
			}
			if (current == null || current.lost) {
				connect();
				return;
			}
			if (System.nanoTime() - current.confirmedAt > this.reconnectAfterNanos) {
				end(current, "no answer to a heartbeat within " + Duration.ofNanos(this.reconnectAfterNanos));
				return;
			}
			sync();
		}
		catch (RuntimeException ex) {
			logger.debug("Redis invalidation tracking heartbeat failed", ex);
		}
	}

	/** Runs once {@link #start(Listener)} has set the listener. */
	private void connect() {
		RedisClient redis = redisClient(this.connectionFactory);
		if (redis == null) {
			return;
		}
		StatefulRedisConnection<byte[], byte[]> connection = null;
		try {
			connection = redis.connect(ByteArrayCodec.INSTANCE);
			Assert.state(
					!(connection instanceof StatefulRedisConnectionImpl<?, ?> impl)
							|| impl.getConnectionState().getNegotiatedProtocolVersion() == ProtocolVersion.RESP3,
					"it needs RESP3 (Redis 6 or later, and a client not configured for RESP2)");
			Session next = new Session(connection, System.nanoTime());
			connection.addListener((PushListener) this::onPush);
			connection.addListener(new RedisConnectionStateListener() {

				@Override
				public void onRedisDisconnected(RedisChannelHandler<?, ?> handler) {
					end(next, "the connection closed");
				}

			});
			connection.sync().clientTracking(TrackingArgs.Builder.enabled());
			synchronized (this) {
				if (this.stopped || next.lost) {
					// Ended meanwhile by its disconnect listener, close() or stop().
					next.end();
					return;
				}
				// Whatever was cached before this session may have changed unseen.
				this.listener.invalidatedAll();
				this.session = next;
			}
			if (this.unavailableReason != null) {
				logger.info("Redis invalidation tracking established: the local cache of idempotent results is on");
				this.unavailableReason = null;
			}
		}
		catch (RuntimeException ex) {
			if (connection != null) {
				connection.closeAsync();
			}
			unavailable("could not start tracking: " + ex.getMessage());
		}
	}

	private void unavailable(String reason) {
		if (this.stopped) {
			return;
		}
		if (this.unavailableReason == null) {
			logger.warn("Redis invalidation tracking is unavailable, " + reason
					+ "; the local cache of idempotent results is bypassed until it is back");
		}
		this.unavailableReason = reason;
	}

	/**
	 * {@code lost} is set before the listener hears of it, so a cache that sees no
	 * invalidation yet sees {@link #isCurrent()} false.
	 */
	private void end(Session ended, String reason) {
		if (!ended.end()) {
			return;
		}
		synchronized (this) {
			if (this.session != ended) {
				return;
			}
			this.session = null;
		}
		this.listener.invalidatedAll();
		unavailable(reason);
	}

	private void onPush(PushMessage message) {
		Listener target = this.listener;
		if (!"invalidate".equals(message.getType())) {
			return;
		}
		List<Object> content = message
			.getContent((buffer) -> StandardCharsets.ISO_8859_1.decode(buffer.duplicate()).toString());
		if (content.size() > 1 && content.get(1) instanceof List<?> keys) {
			keys.forEach((key) -> target.invalidated((String) key));
		}
		else {
			// A null list: the database was flushed.
			target.invalidatedAll();
		}
	}

	@Override
	public void close() {
		stop();
		if (this.scheduler != null) {
			this.scheduler.shutdownNow();
		}
	}

	@Override
	public void start() {
		this.stopped = false;
	}

	/**
	 * Ends the session and waits until its connection is closed, so that Lettuce's
	 * shutdown does not find it open.
	 */
	@Override
	public void stop() {
		Session current;
		synchronized (this) {
			this.stopped = true;
			current = this.session;
		}
		if (this.scheduler != null) {
			// Heartbeats run one at a time: after this no-op, connect() has seen stopped.
			await(() -> this.scheduler.submit(() -> null), Duration.ofSeconds(10));
		}
		if (current != null) {
			end(current, "stopped");
			await(() -> current.closing, current.connection.getTimeout());
		}
	}

	private static void await(Supplier<Future<?>> task, Duration timeout) {
		try {
			task.get().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (ExecutionException | TimeoutException | RuntimeException ex) {
			logger.debug("Redis invalidation tracking did not stop in time", ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	@Override
	public boolean isRunning() {
		return !this.stopped && this.scheduler != null && !this.scheduler.isShutdown();
	}

	@Override
	public int getPhase() {
		return RedisClients.phaseBefore(this.connectionFactory);
	}

	@Override
	public String toString() {
		String reason = this.unavailableReason;
		return "Redis invalidation tracking, "
				+ ((reason != null) ? "unavailable: " + reason : (isCurrent() ? "current" : "established"));
	}

	private static final class Session {

		final StatefulRedisConnection<byte[], byte[]> connection;

		volatile boolean lost;

		volatile long confirmedAt;

		final CompletableFuture<Void> closing = new CompletableFuture<>();

		Session(StatefulRedisConnection<byte[], byte[]> connection, long startedAt) {
			this.connection = connection;
			this.confirmedAt = startedAt;
		}

		synchronized boolean end() {
			if (this.lost) {
				return false;
			}
			this.lost = true;
			this.connection.closeAsync().whenComplete((done, ex) -> this.closing.complete(null));
			return true;
		}

		void confirm(long sentAt) {
			if (!this.lost && sentAt - this.confirmedAt > 0) {
				this.confirmedAt = sentAt;
			}
		}

	}

}
