package io.github.idempotent.core;

import org.jspecify.annotations.Nullable;

/**
 * The result of a completed call cannot be replayed: it was not stored, or no longer
 * decodes. The method is not run again, since it already ran.
 */
public class IdempotencyResultException extends IdempotencyException {

	private static final String DETAIL = "The request with this idempotency key was processed, "
			+ "but its result cannot be returned again";

	public IdempotencyResultException(String message) {
		super(DETAIL, message, null);
	}

	public IdempotencyResultException(String message, Throwable cause) {
		super(DETAIL, message, cause);
	}

	IdempotencyResultException(String detail, String message, @Nullable Throwable cause) {
		super(detail, message, cause);
	}

}
