package io.github.idempotent.core;

/**
 * Base of the exceptions the idempotency protocol throws: the message is for logs, the
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
	 * What went wrong, fit for an API's caller: no class, expression or store names.
	 */
	public String getDetail() {
		return this.detail;
	}

}
