package io.github.idempotent.store;

import java.time.Duration;
import java.util.concurrent.CompletionStage;

/**
 * Optional extension of {@link IdempotencyStore} for stores whose client can wait for the
 * server without holding a thread (Lettuce for Redis). Without it, asynchronous methods
 * run the blocking primitives on a separate executor. Each method means what its blocking
 * twin does; an unreachable store completes the stage exceptionally.
 */
public interface AsyncIdempotencyStore extends IdempotencyStore {

	/** Whether the asynchronous methods are usable now. */
	default boolean supportsAsync() {
		return true;
	}

	CompletionStage<ClaimResult> claimAsync(RecordKey key, Fingerprint fingerprint, Duration lease);

	CompletionStage<Boolean> completeAsync(RecordKey key, String token, Fingerprint fingerprint, StoredResult result,
			Duration ttl);

	CompletionStage<Boolean> releaseAsync(RecordKey key, String token);

}
