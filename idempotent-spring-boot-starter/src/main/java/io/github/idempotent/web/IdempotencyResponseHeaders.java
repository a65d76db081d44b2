package io.github.idempotent.web;

import java.util.function.BiConsumer;
import java.util.function.BooleanSupplier;

import org.springframework.util.Assert;

import io.github.idempotent.core.IdempotencyObserver;
import io.github.idempotent.core.IdempotencyPolicy;

/**
 * Marks the HTTP response of a guarded handler call: a key the client sent in the
 * {@code Idempotency-Key} header is echoed in it (a key taken from the body by an
 * expression is not: it may be data the client never meant as a header), and a replayed
 * response carries {@code Idempotent-Replayed: true}. Made per call, for the response in
 * hand.
 */
public class IdempotencyResponseHeaders {

	/**
	 * Default header that marks a response replayed from the store.
	 */
	public static final String REPLAYED = "Idempotent-Replayed";

	private final String keyHeaderName;

	private final String replayedHeaderName;

	/**
	 * @param keyHeaderName header that carries the key
	 * @param replayedHeaderName header that marks a replay (other libraries and gateways
	 * spell it differently)
	 */
	public IdempotencyResponseHeaders(String keyHeaderName, String replayedHeaderName) {
		Assert.hasText(keyHeaderName, "keyHeaderName must not be empty");
		Assert.hasText(replayedHeaderName, "replayedHeaderName must not be empty");
		this.keyHeaderName = keyHeaderName;
		this.replayedHeaderName = replayedHeaderName;
	}

	/**
	 * Header that carries the key.
	 */
	public String keyHeader() {
		return this.keyHeaderName;
	}

	/**
	 * The observer that marks one call's response.
	 * @param setHeader sets a header of the response
	 * @param committed whether the response has been sent, when nothing can be set
	 * @param echoKey whether the key came from the request's header
	 */
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
