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
 * a share of {@code maxmemory}. Read from {@code INFO} at most once a second, off the
 * claim's thread.
 */
final class RedisMemoryMargin {

	private static final long READ_EVERY_NANOS = TimeUnit.SECONDS.toNanos(1);

	private final RedisConnectionFactory connectionFactory;

	private final AtomicBoolean reading = new AtomicBoolean();

	private volatile double limit = 0.9;

	private volatile long readAt = System.nanoTime() - READ_EVERY_NANOS;

	private volatile @Nullable String full;

	RedisMemoryMargin(RedisConnectionFactory connectionFactory) {
		this.connectionFactory = connectionFactory;
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
			CompletableFuture.supplyAsync(() -> RedisMemoryPolicy.read(this.connectionFactory))
				.whenComplete((policies, ex) -> {
					if (ex == null) {
						this.full = fullness(policies);
					}
					this.reading.set(false);
				});
		}
		return this.full;
	}

	private @Nullable String fullness(List<RedisMemoryPolicy> policies) {
		for (RedisMemoryPolicy policy : policies) {
			if (policy.isAbove(this.limit)) {
				return "The Redis of the idempotency store (" + policy.server() + ") uses "
						+ DataSize.ofBytes(policy.usedMemory()).toKilobytes() + " KB of its maxmemory "
						+ DataSize.ofBytes(policy.maxmemory()).toKilobytes() + " KB: new keys are refused above "
						+ this.limit
						+ " of it (idempotent.store.redis.claim-memory-limit), so that the calls in progress keep room "
						+ "for their results";
			}
		}
		return null;
	}

}
