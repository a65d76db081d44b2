package io.github.idempotent.web;

import java.io.IOException;
import java.io.OutputStream;

import org.jspecify.annotations.Nullable;

import org.springframework.util.FastByteArrayOutputStream;

/**
 * The body of a response held back while it is recorded, bounded by the result size
 * limit: past it, the held bytes are sent, the rest passes through, and the return value
 * is stored instead.
 */
final class HeldBody {

	private final long limit;

	private @Nullable FastByteArrayOutputStream buffer;

	private boolean overflowed;

	HeldBody(long limit) {
		this.limit = limit;
	}

	/**
	 * Holds the bytes if they fit under the limit; else marks the body overflowed and
	 * holds nothing more (see {@link #spillTo}).
	 * @return whether the bytes are held
	 */
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

	/**
	 * Sends what was held before the body overflowed, ahead of what passes through.
	 */
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
