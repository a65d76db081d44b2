package io.github.idempotent.core;

/**
 * Base of the exceptions the idempotency protocol throws. The {@linkplain #getMessage()
 * message} is for logs and may name methods, expressions and stores; the
 * {@linkplain #getDetail() detail} is what a client may be told.
 */
public abstract class IdempotencyException extends RuntimeException {

	private final String detail;

	protected IdempotencyException(String message) {
		this(message, message, null);
	}

	protected IdempotencyException(String message, Throwable cause) {
		this(message, message, cause);
	}

	protected IdempotencyException(String detail, String message, Throwable cause) {
		super(message, cause);
		this.detail = detail;
	}

	/**
	 * What went wrong, in words fit for the caller of an API: no class, method or
	 * expression names, no store addresses.
	 */
	public String getDetail() {
		return this.detail;
	}

}
