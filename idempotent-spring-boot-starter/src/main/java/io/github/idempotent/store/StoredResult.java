package io.github.idempotent.store;

import org.springframework.util.Assert;

/**
 * Encoded outcome of a completed call, opaque to the store. The array is shared, not
 * copied: neither the store nor the codec may modify it.
 */
public record StoredResult(byte[] bytes) {

	public StoredResult {
		Assert.notNull(bytes, "bytes must not be null");
	}

	public int size() {
		return this.bytes.length;
	}

	@Override
	public boolean equals(Object other) {
		return (other instanceof StoredResult that) && java.util.Arrays.equals(this.bytes, that.bytes);
	}

	@Override
	public int hashCode() {
		return java.util.Arrays.hashCode(this.bytes);
	}

	@Override
	public String toString() {
		return "StoredResult[" + this.bytes.length + " bytes]";
	}

}
