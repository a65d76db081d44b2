package io.github.idempotent.core;

import org.jspecify.annotations.Nullable;

/**
 * Stores a call's outcome as its caller was finally sent it, later than the method's
 * return: an HTTP response as the message converters wrote it. The web layer gives one to
 * the executor for a call of the request's own handler method; every other call stores
 * its return value through the codec. A recorder is also told about every replay of the
 * call it was given for, so that the web layer can show it to the application before it
 * is written.
 */
public interface OutcomeRecorder {

	/**
	 * Whether this recorder will take the outcome of the call that is returning: when it
	 * will not (recording is off, the response was written before), the executor stores
	 * the return value itself. A recorder may replay without recording.
	 */
	default boolean records() {
		return true;
	}

	/**
	 * The method returned {@code value}; its response is yet to be written. The recorder
	 * takes over the hold on the key: it must end it exactly once, with
	 * {@link OwnerHandle#completeRecorded} once the response is written, or with
	 * {@link OwnerHandle#complete} (the value through the codec) when the response cannot
	 * be recorded. The lease is renewed until then.
	 */
	void recordLater(OwnerHandle owner, @Nullable Object value);

	/**
	 * A replay of a recorded response of the call of {@code policy} for {@code key}: the
	 * recorder writes it, and returns what the method returns in its place (nothing the
	 * framework would write over it).
	 */
	@Nullable Object replay(IdempotencyPolicy policy, String key, RecordedResponse response);

}
