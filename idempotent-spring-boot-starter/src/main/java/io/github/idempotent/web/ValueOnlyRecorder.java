package io.github.idempotent.web;

import org.jspecify.annotations.Nullable;

import io.github.idempotent.core.IdempotencyPolicy;
import io.github.idempotent.core.IdempotencyResultException;
import io.github.idempotent.core.OutcomeRecorder;
import io.github.idempotent.core.OwnerHandle;
import io.github.idempotent.core.RecordedResponse;

/**
 * The recorder for a call of a handler whose response is not recorded (a view, a
 * primitive): it stores the return value through the codec, and shows its replays to the
 * customizers through the response's own recorder.
 */
final class ValueOnlyRecorder implements OutcomeRecorder {

	private final OutcomeRecorder response;

	ValueOnlyRecorder(OutcomeRecorder response) {
		this.response = response;
	}

	@Override
	public boolean records() {
		return false;
	}

	@Override
	public void recordLater(OwnerHandle owner, @Nullable Object value) {
		owner.completeAsync(value);
	}

	@Override
	public @Nullable Object replay(IdempotencyPolicy policy, String key, RecordedResponse response) {
		throw new IdempotencyResultException("The result of " + policy.name() + " for key '" + key
				+ "' was stored as the HTTP response its first caller was sent; its handler's response is "
				+ "no longer recorded, so it cannot be replayed");
	}

	@Override
	public @Nullable Object replayValue(IdempotencyPolicy policy, String key, @Nullable Object value) {
		return this.response.replayValue(policy, key, value);
	}

}
