package io.github.idempotent.core;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;

import io.github.idempotent.store.StoredResult;

/**
 * A response as its first caller was sent it: the status, the headers that are replayed,
 * and the body bytes exactly as the application's message converters wrote them. A replay
 * writes these bytes again, never decoding or encoding the body, so it is byte for byte
 * what the first caller got, whatever the body's format. Knows no HTTP library: the web
 * layer records and writes it.
 * <p>
 * Stored behind the {@code H} outcome marker as: a flags byte, then the status (2 bytes,
 * big-endian), the number of headers, each header's name and its values, and the body.
 * Counts and lengths are unsigned varints; texts are UTF-8. With flag bit 0 set,
 * everything after the flags byte is deflated, preceded by its inflated length.
 *
 * @param status the HTTP status code
 * @param headers the replayed headers, names as written, in the order they were set
 * @param body the body bytes, shared, not copied: never modify them
 */
public record RecordedResponse(int status, Map<String, List<String>> headers, byte[] body) {

	/** The outcome marker of a recorded response. */
	static final byte MARKER = 'H';

	private static final int DEFLATED = 1;

	private static final int MAX_HEAD_SIZE = 64 * 1024;

	public RecordedResponse {
		Assert.isTrue(status >= 100 && status <= 999, () -> "status must be a 3-digit HTTP status, was " + status);
		Assert.notNull(headers, "headers must not be null");
		Assert.notNull(body, "body must not be null");
		Map<String, List<String>> copy = new LinkedHashMap<>();
		headers.forEach((name, values) -> copy.put(name, List.copyOf(values)));
		headers = Collections.unmodifiableMap(copy);
	}

	/**
	 * The {@code Content-Type} header, or {@code null} when the response had none.
	 */
	public @Nullable String contentType() {
		for (Map.Entry<String, List<String>> header : this.headers.entrySet()) {
			if (header.getKey().equalsIgnoreCase("Content-Type") && !header.getValue().isEmpty()) {
				return header.getValue().get(0);
			}
		}
		return null;
	}

	/**
	 * This response as a first call stores it (without the size limit that call checks):
	 * public for tools that write records the way the executor does, such as the sizing
	 * benchmark.
	 */
	public StoredResult toStoredResult(ResultCompression compression) {
		return new StoredResult(encode(compression));
	}

	/**
	 * Writes this response behind its marker: status, headers and body, deflated together
	 * when {@code compression} asks for it and that makes them smaller (a small body
	 * compresses with the headers it repeats, such as a payment id in its
	 * {@code Location}).
	 */
	byte[] encode(ResultCompression compression) {
		ByteArrayOutputStream head = new ByteArrayOutputStream(64);
		head.write(this.status >>> 8);
		head.write(this.status);
		writeVarint(head, this.headers.size());
		for (Map.Entry<String, List<String>> header : this.headers.entrySet()) {
			writeText(head, header.getKey());
			writeVarint(head, header.getValue().size());
			for (String value : header.getValue()) {
				writeText(head, value);
			}
		}
		// The rest of the record, in an array of its exact size: one copy of the body.
		byte[] written = head.toByteArray();
		byte[] rest = new byte[written.length + this.body.length];
		System.arraycopy(written, 0, rest, 0, written.length);
		System.arraycopy(this.body, 0, rest, written.length, this.body.length);
		byte[] deflated = compression.deflate(rest);
		if (deflated == null) {
			byte[] record = new byte[2 + rest.length];
			record[0] = MARKER;
			System.arraycopy(rest, 0, record, 2, rest.length);
			return record;
		}
		ByteArrayOutputStream record = new ByteArrayOutputStream(8 + deflated.length);
		record.write(MARKER);
		record.write(DEFLATED);
		writeVarint(record, rest.length);
		record.write(deflated, 0, deflated.length);
		return record.toByteArray();
	}

	/**
	 * The response a stored outcome recorded, or {@code null} when it holds something
	 * else (a return value, an error): for tools that show stored records, such as the
	 * Actuator endpoint.
	 * @param maxBodySize largest body inflated, in bytes
	 * @throws IllegalArgumentException when the record is a recorded response that cannot
	 * be read
	 */
	public static @Nullable RecordedResponse read(StoredResult result, long maxBodySize) {
		byte[] bytes = result.bytes();
		if (bytes.length == 0 || bytes[0] != MARKER) {
			return null;
		}
		try {
			return decode(bytes, 1, maxBodySize);
		}
		catch (ResultCompression.CorruptResultException ex) {
			throw new IllegalArgumentException(ex.getMessage(), ex);
		}
	}

	/**
	 * Reads a response written by {@link #encode} from {@code offset} (just past the
	 * marker). A deflated body is inflated to at most {@code maxBodySize} bytes: the
	 * store is not trusted to hold what this application wrote.
	 * @throws IllegalArgumentException naming what is malformed
	 */
	static RecordedResponse decode(byte[] bytes, int offset, long maxBodySize) {
		if (offset >= bytes.length) {
			throw new IllegalArgumentException("it is truncated");
		}
		int flags = bytes[offset] & 0xFF;
		if ((flags & ~DEFLATED) != 0) {
			throw new IllegalArgumentException(
					String.format("its flags 0x%02x are not ones this version writes", flags));
		}
		byte[] rest = bytes;
		int position = offset + 1;
		if ((flags & DEFLATED) != 0) {
			Reader length = new Reader(bytes, position);
			int declared = length.readVarint();
			// Status and headers on top of the body: a header block beyond 64 KB is not
			// one a response of this application had.
			rest = ResultCompression.inflate(bytes, length.position, bytes.length - length.position, declared,
					maxBodySize + MAX_HEAD_SIZE);
			position = 0;
		}
		Reader in = new Reader(rest, position);
		int status = (in.readByte() << 8) | in.readByte();
		if (status < 100 || status > 999) {
			throw new IllegalArgumentException("its status " + status + " is not an HTTP status");
		}
		int count = in.readVarint();
		Map<String, List<String>> headers = new LinkedHashMap<>();
		for (int i = 0; i < count; i++) {
			String name = in.readText();
			int valueCount = in.readVarint();
			if (valueCount == 0) {
				throw new IllegalArgumentException("its header " + name + " has no value");
			}
			List<String> values = new ArrayList<>(Math.min(valueCount, 16));
			for (int j = 0; j < valueCount; j++) {
				values.add(in.readText());
			}
			headers.put(name, values);
		}
		return new RecordedResponse(status, headers, java.util.Arrays.copyOfRange(rest, in.position, rest.length));
	}

	private static void writeText(ByteArrayOutputStream out, String text) {
		byte[] utf8 = text.getBytes(StandardCharsets.UTF_8);
		writeVarint(out, utf8.length);
		out.write(utf8, 0, utf8.length);
	}

	private static void writeVarint(ByteArrayOutputStream out, int value) {
		int rest = value;
		while ((rest & ~0x7F) != 0) {
			out.write((rest & 0x7F) | 0x80);
			rest >>>= 7;
		}
		out.write(rest);
	}

	@Override
	public boolean equals(Object other) {
		return (other instanceof RecordedResponse that) && this.status == that.status
				&& this.headers.equals(that.headers) && java.util.Arrays.equals(this.body, that.body);
	}

	@Override
	public int hashCode() {
		return 31 * (31 * this.status + this.headers.hashCode()) + java.util.Arrays.hashCode(this.body);
	}

	@Override
	public String toString() {
		return "RecordedResponse[" + this.status + ", "
				+ this.headers.keySet().stream().map((name) -> name.toLowerCase(Locale.ROOT)).toList() + ", "
				+ this.body.length + " bytes]";
	}

	private static final class Reader {

		private final byte[] bytes;

		int position;

		Reader(byte[] bytes, int position) {
			this.bytes = bytes;
			this.position = position;
		}

		int readByte() {
			if (this.position >= this.bytes.length) {
				throw new IllegalArgumentException("it is truncated");
			}
			return this.bytes[this.position++] & 0xFF;
		}

		int readVarint() {
			int value = 0;
			for (int shift = 0; shift < 32; shift += 7) {
				int b = readByte();
				value |= (b & 0x7F) << shift;
				if ((b & 0x80) == 0) {
					if (value < 0) {
						break;
					}
					return value;
				}
			}
			throw new IllegalArgumentException("it holds a length beyond 2^31");
		}

		String readText() {
			int length = readVarint();
			if (length > this.bytes.length - this.position) {
				throw new IllegalArgumentException("it is truncated");
			}
			String text = new String(this.bytes, this.position, length, StandardCharsets.UTF_8);
			this.position += length;
			return text;
		}

	}

}
