package io.github.idempotent.core;

/**
 * The stored result of a completed call cannot be replayed: it could not be encoded, it
 * exceeded the size limit, or it no longer decodes into the method's return type. The
 * method is deliberately not run again, since it already ran once.
 */
public class IdempotencyResultException extends IdempotencyException {

	public IdempotencyResultException(String message) {
		super(message);
	}

	public IdempotencyResultException(String message, Throwable cause) {
		super(message, cause);
	}

}
