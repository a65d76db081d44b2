package io.github.idempotent.core;

/** A keyed request's body is above {@code idempotent.web.max-request-size} (HTTP 413). */
public class IdempotencyRequestTooLargeException extends IdempotencyException {

	private final long limit;

	public IdempotencyRequestTooLargeException(long limit) {
		super("The request body is larger than the " + limit + " bytes an idempotent request may have");
		this.limit = limit;
	}

	/** Largest body accepted, in bytes. */
	public long getLimit() {
		return this.limit;
	}

}
