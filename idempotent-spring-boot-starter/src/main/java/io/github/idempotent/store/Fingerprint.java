package io.github.idempotent.store;

import org.springframework.util.Assert;

/**
 * Hash of the payload a key was first used with; the same key with another fingerprint is
 * a reuse of the key for a different request.
 */
public record Fingerprint(String value) {

	public Fingerprint {
		Assert.hasText(value, "value must not be empty");
	}

	@Override
	public String toString() {
		return this.value;
	}

}
