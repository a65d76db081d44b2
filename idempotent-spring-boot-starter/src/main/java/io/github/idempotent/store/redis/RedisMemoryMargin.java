package io.github.idempotent.store.redis;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.util.unit.DataSize;

/**
 * Whether the store's Redis is too full for new claims: near {@code maxmemory} under
 * {@code noeviction} Redis would take a claim's placeholder and refuse the larger result
 * that follows. Read from {@code INFO} at most once a second on a thread of its own,
 * which ends when idle or closed (the JVM's common pool may not block).
 */
final class RedisMemoryMargin {

	private static final long READ_EVERY_NANOS = TimeUnit.SECONDS.toNanos(1);

	private final RedisConnectionFactory connectionFactory;

	private final AtomicBoolean reading = new AtomicBoolean();

	private volatile double limit = 0.9;

	private volatile long readAt = System.nanoTime() - READ_EVERY_NANOS;

	private volatile @Nullable String full;

	private @Nullable ThreadPoolExecutor reader;

	RedisMemoryMargin(RedisConnectionFactory connectionFactory) {
		this.connectionFactory = connectionFactory;
	}

	void setLimit(double limit) {
		this.limit = limit;
		this.full = null;
	}

	/** Why new claims are refused, as last read; {@code null} if there is room. */
	@Nullable String full() {
		if (this.limit < 1 && System.nanoTime() - this.readAt >= READ_EVERY_NANOS
				&& this.reading.compareAndSet(false, true)) {
			this.readAt = System.nanoTime();
			read();
		}
		return this.full;
	}

	/** Under the lock of {@link #close}: never on a reader that is shut down. */
	private synchronized void read() {
		if (this.reader == null) {
			this.reader = RedisClients.ownThread("idempotent-redis-memory", Integer.MAX_VALUE);
		}
		CompletableFuture.supplyAsync(() -> RedisMemoryPolicy.read(this.connectionFactory), this.reader)
			.whenComplete((policies, ex) -> {
				if (ex == null) {
					this.full = fullness(policies);
				}
				this.reading.set(false);
			});
	}

	/** Stops the reading thread; a later claim starts another. */
	synchronized void close() {
		if (this.reader != null) {
			this.reader.shutdown();
			this.reader = null;
		}
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
