package io.github.idempotent.web;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;

/**
 * The body of a response held back while it is recorded, up to the result size limit, on
 * Spring MVC and WebFlux.
 */
final class HeldBody extends ByteArrayOutputStream {

	static final String TOO_LARGE = "its response body was larger than idempotent.max-result-size";

	private final long limit;

	private volatile boolean overflowed;

	HeldBody(long limit) {
		super(0);
		this.limit = limit;
	}

	// False from the first write past the limit on: what was held is then to be sent.
	synchronized boolean hold(byte[] b, int off, int len) {
		if (!this.overflowed && this.count + (long) len <= this.limit) {
			write(b, off, len);
			return true;
		}
		this.overflowed = true;
		return false;
	}

	synchronized void spillTo(OutputStream target) throws IOException {
		writeTo(target);
		reset();
	}

	boolean isOverflowed() {
		return this.overflowed;
	}

}
