package io.github.idempotent.core;

import java.util.concurrent.CompletableFuture;

import org.jspecify.annotations.Nullable;

/**
 * Stores a call's outcome as its caller was finally sent it, after the method returned:
 * an HTTP response as the message converters wrote it. The web layer passes one for the
 * request's own handler method, and writes that call's replays through it, so that the
 * application sees them before they are written; every other call stores its return value
 * through the codec.
 */
public interface OutcomeRecorder {

	/**
	 * Whether this recorder takes the outcome of the returning call; if not (recording
	 * off, response already written), the executor stores the return value itself. It may
	 * replay all the same.
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
	 * Writes a recorded response as the replay for {@code key}, and returns what the
	 * method returns in its place (nothing the framework would write over it).
	 */
	@Nullable Object replay(IdempotencyPolicy policy, String key, RecordedResponse response);

	/**
	 * The hold on a key whose response is being written; the executor decides what is
	 * stored.
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
