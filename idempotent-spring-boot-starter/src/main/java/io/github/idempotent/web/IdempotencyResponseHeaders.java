package io.github.idempotent.web;

import java.util.function.BiConsumer;
import java.util.function.BooleanSupplier;

import org.springframework.util.Assert;

import io.github.idempotent.core.IdempotencyObserver;
import io.github.idempotent.core.IdempotencyPolicy;

/**
 * The names of the headers the starter writes: the key, echoed on the response when the
 * client sent it in the header, and {@code Idempotent-Replayed: true} on a replay.
 */
public class IdempotencyResponseHeaders {

	/** Default header that marks a response replayed from the store. */
	public static final String REPLAYED = "Idempotent-Replayed";

	private final String keyHeaderName;

	private final String replayedHeaderName;

	public IdempotencyResponseHeaders(String keyHeaderName, String replayedHeaderName) {
		Assert.hasText(keyHeaderName, "keyHeaderName must not be empty");
		Assert.hasText(replayedHeaderName, "replayedHeaderName must not be empty");
		this.keyHeaderName = keyHeaderName;
		this.replayedHeaderName = replayedHeaderName;
	}

	/** Header that carries the key. */
	public String keyHeader() {
		return this.keyHeaderName;
	}

	// echoKey: the key came from the request's header, not an expression.
	IdempotencyObserver of(BiConsumer<String, String> setHeader, BooleanSupplier committed, boolean echoKey) {
		return new IdempotencyObserver() {

			@Override
			public void executed(IdempotencyPolicy policy, String key) {
				mark(key, false);
			}

			@Override
			public void replayed(IdempotencyPolicy policy, String key) {
				mark(key, true);
			}

			private void mark(String key, boolean replayed) {
				if (committed.getAsBoolean()) {
					return;
				}
				if (echoKey) {
					setHeader.accept(IdempotencyResponseHeaders.this.keyHeaderName, key);
				}
				if (replayed) {
					setHeader.accept(IdempotencyResponseHeaders.this.replayedHeaderName, "true");
				}
			}

		};
	}

}
