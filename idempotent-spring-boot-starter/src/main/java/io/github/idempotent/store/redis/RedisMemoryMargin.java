package io.github.idempotent.store.redis;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.util.unit.DataSize;

import io.github.idempotent.store.redis.RedisMemoryPolicyGuard.MemoryPolicy;

/**
 * Whether the store's Redis is too full for new claims. Under
 * {@code maxmemory-policy noeviction} Redis refuses a write only once its used memory is
 * above {@code maxmemory}, whatever the write's size: near that line it still takes a
 * claim's small placeholder and then refuses the larger result written when the call
 * completes. New claims are refused first, once used memory is above a share of
 * {@code maxmemory} (0.9 by default), so that the calls in progress keep the rest for
 * their results.
 * <p>
 * Read from {@code INFO memory} ({@code used_memory}, {@code maxmemory},
 * {@code maxmemory_policy}; on Redis Cluster every primary, any one above the share
 * counts) when a claim asks, at most once a second and one read at a time, never on the
 * claim's own path: on Lettuce without holding a thread, on the other clients on the
 * claiming thread, which blocks anyway. Nothing is read while no claims are made. A claim
 * within a second of memory filling up is not refused here: Redis's own refusal, and the
 * record of a result that was not stored, cover it.
 */
final class RedisMemoryMargin {

	private static final long READ_EVERY_NANOS = TimeUnit.SECONDS.toNanos(1);

	private final RedisConnectionFactory connectionFactory;

	private final RedisScriptRunner scripts;

	private final AtomicBoolean reading = new AtomicBoolean();

	private volatile double limit = 0.9;

	private volatile long readAt = System.nanoTime() - READ_EVERY_NANOS;

	private volatile @Nullable String full;

	RedisMemoryMargin(RedisConnectionFactory connectionFactory, RedisScriptRunner scripts) {
		this.connectionFactory = connectionFactory;
		this.scripts = scripts;
	}

	void setLimit(double limit) {
		this.limit = limit;
		this.full = null;
	}

	/**
	 * Why new claims are refused as of the last reading, or {@code null} when there is
	 * room; starts the next reading when the last one is a second old.
	 */
	@Nullable String full() {
		if (this.limit < 1 && System.nanoTime() - this.readAt >= READ_EVERY_NANOS
				&& this.reading.compareAndSet(false, true)) {
			this.readAt = System.nanoTime();
			read().whenComplete((policies, ex) -> {
				if (ex == null) {
					this.full = fullness(policies);
				}
				this.reading.set(false);
			});
		}
		return this.full;
	}

	private CompletableFuture<List<MemoryPolicy>> read() {
		try {
			if (this.scripts.supportsAsync()) {
				return this.scripts.withAsyncCommands(AsyncRedisCommands::memoryInfo)
					.thenApply((nodes) -> nodes.stream()
						.flatMap((info) -> MemoryPolicy.of(RedisMemoryPolicyGuard.parse(info), "Redis").stream())
						.toList());
			}
			try (RedisConnection connection = this.connectionFactory.getConnection()) {
				return CompletableFuture
					.completedFuture(MemoryPolicy.of(connection.serverCommands().info("memory"), "Redis"));
			}
		}
		catch (RuntimeException ex) {
			// Unreachable: the claim fails by itself, and the last reading stands.
			return CompletableFuture.failedFuture(ex);
		}
	}

	private @Nullable String fullness(List<MemoryPolicy> policies) {
		for (MemoryPolicy policy : policies) {
			long max = policy.maxmemory();
			if (max > 0 && "noeviction".equals(policy.policy()) && policy.usedMemory() > this.limit * max) {
				return "The Redis of the idempotency store (" + policy.server() + ") uses "
						+ DataSize.ofBytes(policy.usedMemory()).toKilobytes() + " KB of its maxmemory "
						+ DataSize.ofBytes(max).toKilobytes() + " KB: new keys are refused above " + this.limit
						+ " of it (idempotent.store.redis.claim-memory-limit), so that the calls in progress keep room "
						+ "for their results";
			}
		}
		return null;
	}

}
