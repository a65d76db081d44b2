package io.github.idempotent.core;

import org.jspecify.annotations.Nullable;

/**
 * Supplies the key of a call whose annotation has no key expression, from the calling
 * context: the {@code Idempotency-Key} header of the current HTTP request, say.
 */
@FunctionalInterface
public interface IdempotencyKeyResolver {

	/**
	 * The key of the current call, or {@code null} when the context has none.
	 * @throws IdempotencyKeyException when a key is present but malformed
	 */
	@Nullable String resolveKey();

	/**
	 * Where the key comes from, for the message that tells a caller what to send.
	 */
	default String describeSource() {
		return "a key expression on the annotation";
	}

}
