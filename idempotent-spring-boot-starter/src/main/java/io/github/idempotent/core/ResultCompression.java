package io.github.idempotent.core;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.zip.DataFormatException;
import java.util.zip.Deflater;
import java.util.zip.Inflater;

import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;

import io.github.idempotent.store.StoredResult;

/**
 * Raw-deflate compression of stored results above a threshold; a record says how it was
 * encoded, so turning compression on or off never strands one. Deflaters hold native
 * memory (about 256 KB): a small shared pool, not one per (virtual) thread.
 */
final class ResultCompression {

	static final byte DEFLATED = 'Z';

	/** Marker, then the encoded result's length. */
	private static final int HEADER = 5;

	private static final int POOL_SIZE = Math.min(16, 2 * Runtime.getRuntime().availableProcessors());

	private static final BlockingQueue<Deflater> deflaters = new ArrayBlockingQueue<>(POOL_SIZE);

	private static final BlockingQueue<Inflater> inflaters = new ArrayBlockingQueue<>(POOL_SIZE);

	private static final ResultCompression NONE = new ResultCompression(Long.MAX_VALUE);

	private final long threshold;

	private ResultCompression(long threshold) {
		this.threshold = threshold;
	}

	/** No compression; compressed records are still replayed. */
	static ResultCompression none() {
		return NONE;
	}

	/** Deflates encoded results of more than {@code thresholdBytes}. */
	static ResultCompression deflate(long thresholdBytes) {
		Assert.isTrue(thresholdBytes >= 0, "thresholdBytes must not be negative");
		return new ResultCompression(thresholdBytes);
	}

	/** The stored form of a value outcome. */
	StoredResult compress(StoredResult result) {
		byte[] bytes = result.bytes();
		int length = bytes.length - 1;
		if (length <= this.threshold || bytes[0] != StoredOutcome.VALUE) {
			return result;
		}
		byte[] deflated = deflate(bytes, 1, length, HEADER);
		if (deflated == null) {
			return result;
		}
		ByteBuffer.wrap(deflated).put(DEFLATED).putInt(length);
		return new StoredResult(deflated);
	}

	/** {@code null} when {@code data} is to be stored as it is. */
	byte @Nullable [] deflate(byte[] data) {
		return (data.length <= this.threshold) ? null : deflate(data, 0, data.length, 0);
	}

	private static byte @Nullable [] deflate(byte[] data, int offset, int length, int header) {
		// The output buffer is exactly as large as the raw form: a deflated form that
		// does not fit is not smaller, and is not kept.
		byte[] out = new byte[header + length];
		int position = header;
		Deflater deflater = Objects.requireNonNullElseGet(deflaters.poll(),
				() -> new Deflater(Deflater.DEFAULT_COMPRESSION, true));
		try {
			deflater.setInput(data, offset, length);
			deflater.finish();
			while (!deflater.finished() && position < out.length) {
				int deflated = deflater.deflate(out, position, out.length - position);
				if (deflated == 0) {
					break;
				}
				position += deflated;
			}
			if (!deflater.finished() || position >= out.length) {
				return null;
			}
		}
		finally {
			deflater.reset();
			if (!deflaters.offer(deflater)) {
				deflater.end();
			}
		}
		return Arrays.copyOf(out, position);
	}

	static boolean isDeflated(byte[] stored) {
		return stored.length > 0 && stored[0] == DEFLATED;
	}

	/**
	 * The declared length is checked before allocating and must match exactly, so a
	 * crafted record that inflates to gigabytes cannot exhaust the heap.
	 */
	static byte[] inflate(byte[] stored, long limit) {
		Assert.isTrue(stored.length >= HEADER, "it is truncated");
		return inflate(stored, HEADER, stored.length - HEADER, ByteBuffer.wrap(stored, 1, 4).getInt(), limit);
	}

	static byte[] inflate(byte[] data, int offset, int length, int declared, long limit) {
		Assert.isTrue(declared >= 0 && declared <= limit, () -> "it declares " + Integer.toUnsignedString(declared)
				+ " bytes, above idempotent.max-result-size (" + limit + " bytes)");
		byte[] out = new byte[declared];
		Inflater inflater = Objects.requireNonNullElseGet(inflaters.poll(), () -> new Inflater(true));
		try {
			inflater.setInput(data, offset, length);
			int position = 0;
			while (position < declared) {
				int inflated = inflater.inflate(out, position, declared - position);
				if (inflated == 0 && (inflater.finished() || inflater.needsInput() || inflater.needsDictionary())) {
					break;
				}
				position += inflated;
			}
			Assert.isTrue(position == declared, "it inflates to fewer bytes than it declares");
			// A last empty block may remain; anything more is not what was written.
			Assert.isTrue(inflater.finished() || (inflater.inflate(new byte[1]) == 0 && inflater.finished()),
					"it inflates to more bytes than it declares");
			return out;
		}
		catch (DataFormatException ex) {
			throw new IllegalArgumentException("it is not valid deflate data (" + ex.getMessage() + ")");
		}
		finally {
			inflater.reset();
			if (!inflaters.offer(inflater)) {
				inflater.end();
			}
		}
	}

}
