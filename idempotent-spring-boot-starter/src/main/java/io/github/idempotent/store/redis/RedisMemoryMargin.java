package io.github.idempotent.store.redis;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.util.unit.DataSize;

/**
 * Whether the store's Redis is too full for new claims: under {@code noeviction} Redis
 * refuses writes only above {@code maxmemory}, so near that line it takes a claim's small
 * placeholder and refuses the larger result that follows. Claims are refused first, above
 * a share of {@code maxmemory}. Read from {@code INFO memory} at most once a second,
 * never blocking a claim on Lettuce.
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
	 * Why new claims are refused as of the last reading, {@code null} when there is room.
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

	private CompletableFuture<List<RedisMemoryPolicy>> read() {
		try {
			if (this.scripts.supportsAsync()) {
				return this.scripts.withAsyncCommands(AsyncRedisCommands::memoryInfo)
					.thenApply((nodes) -> nodes.stream()
						.flatMap((info) -> RedisMemoryPolicy.of(RedisMemoryPolicy.parse(info), "Redis").stream())
						.toList());
			}
			return CompletableFuture.completedFuture(RedisMemoryPolicy.read(this.connectionFactory));
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	private @Nullable String fullness(List<RedisMemoryPolicy> policies) {
		for (RedisMemoryPolicy policy : policies) {
			long max = policy.maxmemory();
			if (policy.isAbove(this.limit)) {
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
