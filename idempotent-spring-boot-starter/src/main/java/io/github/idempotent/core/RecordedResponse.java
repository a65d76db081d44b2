package io.github.idempotent.core;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;

import io.github.idempotent.store.StoredResult;

/**
 * A response as its first caller was sent it, so a replay is byte for byte the same;
 * stored as docs/stores.md, "Record format 1", says.
 *
 * @param status the HTTP status code
 * @param headers the replayed headers, in the order they were set
 * @param body the body bytes, shared, not copied: never modify them
 */
public record RecordedResponse(int status, Map<String, List<String>> headers, byte[] body) {

	static final byte MARKER = 'H';

	private static final int DEFLATED = 1;

	/** The first marker of the compact JSON layout; the flags below are added to it. */
	static final byte JSON = 'J';

	private static final int JSON_CREATED = 1;

	private static final int JSON_CHARSET = 2;

	private static final int JSON_DEFLATED = 4;

	private static final String CONTENT_TYPE = "Content-Type";

	private static final String JSON_TYPE = "application/json";

	private static final String JSON_TYPE_UTF8 = "application/json;charset=UTF-8";

	private static final int MAX_HEAD_SIZE = 64 * 1024;

	public RecordedResponse {
		Assert.isTrue(status >= 100 && status <= 999, () -> "status must be a 3-digit HTTP status, was " + status);
		Assert.notNull(headers, "headers must not be null");
		Assert.notNull(body, "body must not be null");
		Map<String, List<String>> copy = new LinkedHashMap<>();
		headers.forEach((name, values) -> copy.put(name, List.copyOf(values)));
		headers = Collections.unmodifiableMap(copy);
	}

	public @Nullable String contentType() {
		for (Map.Entry<String, List<String>> header : this.headers.entrySet()) {
			if (header.getKey().equalsIgnoreCase(CONTENT_TYPE) && !header.getValue().isEmpty()) {
				return header.getValue().get(0);
			}
		}
		return null;
	}

	/** Status, headers and body behind the marker, deflated together if smaller. */
	StoredResult toStoredResult(ResultCompression compression) {
		int json = jsonLayout();
		if (json >= 0) {
			return new StoredResult(encodeJson(json, compression));
		}
		ByteArrayOutputStream head = new ByteArrayOutputStream(64 + this.body.length);
		head.write(this.status >>> 8);
		head.write(this.status);
		writeVarint(head, this.headers.size());
		this.headers.forEach((name, values) -> {
			writeText(head, name);
			writeVarint(head, values.size());
			values.forEach((value) -> writeText(head, value));
		});
		head.writeBytes(this.body);
		byte[] rest = head.toByteArray();
		byte[] deflated = compression.deflate(rest);
		ByteArrayOutputStream record = new ByteArrayOutputStream(8 + rest.length);
		record.write(MARKER);
		record.write((deflated != null) ? DEFLATED : 0);
		if (deflated != null) {
			writeVarint(record, rest.length);
		}
		record.writeBytes((deflated != null) ? deflated : rest);
		return new StoredResult(record.toByteArray());
	}

	/** The compact layout's marker offset, or -1 for the general layout. */
	private int jsonLayout() {
		if ((this.status != 200 && this.status != 201) || this.headers.size() != 1) {
			return -1;
		}
		List<String> values = this.headers.get(CONTENT_TYPE);
		if (values == null || values.size() != 1) {
			return -1;
		}
		int created = (this.status == 201) ? JSON_CREATED : 0;
		return switch (values.get(0)) {
			case JSON_TYPE -> created;
			case JSON_TYPE_UTF8 -> created + JSON_CHARSET;
			default -> -1;
		};
	}

	private byte[] encodeJson(int layout, ResultCompression compression) {
		byte[] deflated = compression.deflate(this.body);
		if (deflated != null) {
			ByteArrayOutputStream record = new ByteArrayOutputStream(6 + deflated.length);
			record.write(JSON + layout + JSON_DEFLATED);
			writeVarint(record, this.body.length);
			if (record.size() + deflated.length < 1 + this.body.length) {
				record.write(deflated, 0, deflated.length);
				return record.toByteArray();
			}
		}
		byte[] record = new byte[1 + this.body.length];
		record[0] = (byte) (JSON + layout);
		System.arraycopy(this.body, 0, record, 1, this.body.length);
		return record;
	}

	static boolean isJson(byte marker) {
		return marker >= JSON && marker <= JSON + JSON_CREATED + JSON_CHARSET + JSON_DEFLATED;
	}

	/**
	 * The response a stored outcome recorded, or {@code null} if it holds another
	 * outcome; inflates at most {@code maxBodySize} bytes of body.
	 * @throws IllegalArgumentException if the recorded response cannot be read
	 */
	public static @Nullable RecordedResponse read(StoredResult result, long maxBodySize) {
		byte[] bytes = result.bytes();
		if (bytes.length == 0 || (bytes[0] != MARKER && !isJson(bytes[0]))) {
			return null;
		}
		return (bytes[0] == MARKER) ? decode(bytes, maxBodySize) : decodeJson(bytes, maxBodySize);
	}

	/**
	 * A stored outcome that is not a response: a value as the codec wrote it (inflated to
	 * at most {@code limit} bytes), any other outcome as it is; for the Actuator
	 * endpoint.
	 * @throws IllegalArgumentException if a compressed value cannot be inflated
	 */
	public static byte[] readOther(StoredResult result, long limit) {
		byte[] bytes = result.bytes();
		if (ResultCompression.isDeflated(bytes)) {
			return ResultCompression.inflate(bytes, limit);
		}
		return (bytes.length > 0 && bytes[0] == StoredOutcome.VALUE) ? Arrays.copyOfRange(bytes, 1, bytes.length)
				: bytes;
	}

	/** Reads a {@link #toStoredResult} from past the marker; the store is not trusted. */
	private static RecordedResponse decode(byte[] bytes, long maxBodySize) {
		Reader in = new Reader(bytes, 1);
		int flags = in.readByte();
		Assert.isTrue((flags & ~DEFLATED) == 0,
				() -> String.format("its flags 0x%02x are not ones this version writes", flags));
		if ((flags & DEFLATED) != 0) {
			// A header block beyond 64 KB is not one this application wrote.
			in = new Reader(inflate(in, maxBodySize + MAX_HEAD_SIZE), 0);
		}
		int status = (in.readByte() << 8) | in.readByte();
		int count = in.readVarint();
		Map<String, List<String>> headers = new LinkedHashMap<>();
		for (int i = 0; i < count; i++) {
			String name = in.readText();
			int valueCount = in.readVarint();
			Assert.isTrue(valueCount != 0, () -> "its header " + name + " has no value");
			List<String> values = new ArrayList<>(Math.min(valueCount, 16));
			for (int j = 0; j < valueCount; j++) {
				values.add(in.readText());
			}
			headers.put(name, values);
		}
		return new RecordedResponse(status, headers, Arrays.copyOfRange(in.bytes, in.position, in.bytes.length));
	}

	private static RecordedResponse decodeJson(byte[] bytes, long maxBodySize) {
		int layout = bytes[0] - JSON;
		int status = ((layout & JSON_CREATED) != 0) ? 201 : 200;
		String type = ((layout & JSON_CHARSET) != 0) ? JSON_TYPE_UTF8 : JSON_TYPE;
		byte[] body = ((layout & JSON_DEFLATED) != 0) ? inflate(new Reader(bytes, 1), maxBodySize)
				: Arrays.copyOfRange(bytes, 1, bytes.length);
		return new RecordedResponse(status, Map.of(CONTENT_TYPE, List.of(type)), body);
	}

	/** The deflated bytes {@code in} has next, behind their length. */
	private static byte[] inflate(Reader in, long limit) {
		int declared = in.readVarint();
		return ResultCompression.inflate(in.bytes, in.position, in.bytes.length - in.position, declared, limit);
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
				&& this.headers.equals(that.headers) && Arrays.equals(this.body, that.body);
	}

	@Override
	public int hashCode() {
		return 31 * (31 * this.status + this.headers.hashCode()) + Arrays.hashCode(this.body);
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
			Assert.isTrue(this.position < this.bytes.length, "it is truncated");
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
			Assert.isTrue(length <= this.bytes.length - this.position, "it is truncated");
			String text = new String(this.bytes, this.position, length, StandardCharsets.UTF_8);
			this.position += length;
			return text;
		}

	}

}
