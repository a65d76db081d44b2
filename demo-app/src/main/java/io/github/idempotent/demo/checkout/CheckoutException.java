package io.github.idempotent.demo.checkout;

import org.springframework.http.HttpStatus;

/**
 * A refusal of the checkout's own rules, answered as a problem with {@link #getStatus()}.
 */
public class CheckoutException extends RuntimeException {

	private final HttpStatus status;

	private final String type;

	public CheckoutException(HttpStatus status, String type, String message) {
		super(message);
		this.status = status;
		this.type = type;
	}

	public HttpStatus getStatus() {
		return this.status;
	}

	/**
	 * Short problem type, such as {@code insufficient-funds}.
	 */
	public String getType() {
		return this.type;
	}

	static CheckoutException notFound(String what) {
		return new CheckoutException(HttpStatus.NOT_FOUND, "not-found", what + " does not exist");
	}

	static CheckoutException invalid(String message) {
		return new CheckoutException(HttpStatus.BAD_REQUEST, "invalid-request", message);
	}

}
