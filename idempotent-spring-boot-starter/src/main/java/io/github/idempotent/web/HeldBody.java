package io.github.idempotent.web;

import java.io.IOException;
import java.io.OutputStream;

import org.jspecify.annotations.Nullable;

import org.springframework.util.FastByteArrayOutputStream;

/**
 * The body of a response held back while it is recorded, up to the result size limit.
 */
final class HeldBody {

	private final long limit;

	private @Nullable FastByteArrayOutputStream buffer;

	private boolean overflowed;

	HeldBody(long limit) {
		this.limit = limit;
	}

	boolean hold(byte[] b, int off, int len) throws IOException {
		if (this.overflowed) {
			return false;
		}
		FastByteArrayOutputStream buffer = this.buffer;
		if (buffer == null) {
			buffer = new FastByteArrayOutputStream(Math.max(256, len));
			this.buffer = buffer;
		}
		if (buffer.size() + (long) len <= this.limit) {
			buffer.write(b, off, len);
			return true;
		}
		this.overflowed = true;
		return false;
	}

	void spillTo(OutputStream target) throws IOException {
		if (this.buffer != null) {
			this.buffer.writeTo(target);
			this.buffer.reset();
		}
	}

	boolean isOverflowed() {
		return this.overflowed;
	}

	byte[] bytes() {
		return (this.buffer != null) ? this.buffer.toByteArrayUnsafe() : new byte[0];
	}

	void reset() {
		if (this.buffer != null) {
			this.buffer.reset();
		}
	}

}
