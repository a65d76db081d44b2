package io.github.idempotent.web;

import org.springframework.util.Assert;

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

	/** Header that marks a replay. */
	String replayedHeader() {
		return this.replayedHeaderName;
	}

}
