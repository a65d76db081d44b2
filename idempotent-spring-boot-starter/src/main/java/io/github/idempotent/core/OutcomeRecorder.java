package io.github.idempotent.core;

import java.util.concurrent.CompletableFuture;

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
	 * must {@link Hold#end end} {@code hold} exactly once, when the response is written
	 * or the request is over; the lease is renewed until then.
	 */
	void recordLater(Hold hold, @Nullable Object value);

	/**
	 * A replay of a recorded response of the call of {@code policy} for {@code key}: the
	 * recorder writes it, and returns what the method returns in its place (nothing the
	 * framework would write over it).
	 */
	@Nullable Object replay(IdempotencyPolicy policy, String key, RecordedResponse response);

	/**
	 * The hold on the key of a call whose response is being written. The recorder tells
	 * it what happened; the executor decides what is stored.
	 */
	interface Hold {

		/**
		 * Ends the hold: releases the key when the call {@code failed} (or stores the
		 * failure, when the operation's {@code cacheFor} lists its type) or its
		 * {@code status} is one that releases it, else stores {@code response} for
		 * replay, or, when it is {@code null}, a record that says the call completed and
		 * why its response is not stored ({@code unrecordable}).
		 * @return completes once the store has answered, exceptionally only if a step
		 * itself broke
		 */
		CompletableFuture<Void> end(int status, @Nullable RecordedResponse response, @Nullable String unrecordable,
				@Nullable Throwable failed);

	}

}
