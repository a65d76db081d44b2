package io.github.idempotent.store;

import java.time.Duration;
import java.util.concurrent.CompletionStage;

/**
 * Optional extension of {@link IdempotencyStore} for stores whose client can wait for the
 * server without holding a thread (Lettuce for Redis). The protocol of
 * {@code CompletableFuture}, {@code Mono} and Kotlin {@code suspend} methods uses these
 * methods when they are available; on a store without them it runs the blocking
 * primitives on a separate executor (Reactor's bounded elastic scheduler when Reactor is
 * present), never on the thread that completes the caller's future or signal.
 * <p>
 * {@link CompletionStage} rather than a Reactor type: the store SPI stays free of
 * Reactor, which an application with futures only does not have. Each method has the
 * meaning of its blocking twin; a store that cannot be reached completes the stage
 * exceptionally, contention is a value. Lease renewal stays blocking: it runs on the
 * lease watchdog's own thread.
 */
public interface AsyncIdempotencyStore extends IdempotencyStore {

	/**
	 * Whether the asynchronous methods are usable now (the connection may not allow
	 * them); when {@code false} the blocking methods are used on a separate executor.
	 */
	default boolean supportsAsync() {
		return true;
	}

	/**
	 * {@link #claim} without blocking.
	 */
	CompletionStage<ClaimResult> claimAsync(RecordKey key, Fingerprint fingerprint, Duration lease);

	/**
	 * {@link #complete} without blocking.
	 */
	CompletionStage<Boolean> completeAsync(RecordKey key, String token, Fingerprint fingerprint, StoredResult result,
			Duration ttl);

	/**
	 * {@link #release} without blocking.
	 */
	CompletionStage<Boolean> releaseAsync(RecordKey key, String token);

}
