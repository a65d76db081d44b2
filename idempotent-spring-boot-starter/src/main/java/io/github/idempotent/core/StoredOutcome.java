package io.github.idempotent.core;

import java.io.ByteArrayOutputStream;
import java.lang.reflect.Constructor;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;
import java.util.stream.Stream;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.util.ReflectionUtils;

import io.github.idempotent.store.StoredResult;

/**
 * Record format 1 of a stored outcome (docs/stores.md, "Record format 1"): a marker byte,
 * {@code V} a value, {@code Z} a compressed value, {@code H} or {@code J} to {@code Q} a
 * recorded response, {@code E} a {@code cacheFor} exception, {@code X} a result not
 * stored. Markers 0x01 to 0x1F are reserved for later formats.
 */
final class StoredOutcome {

	private static final Log logger = LogFactory.getLog(IdempotencyExecutor.class);

	static final byte VALUE = 'V';

	private static final byte ERROR = 'E';

	private static final byte UNSTORABLE = 'X';

	private static final String NOT_STORED = "The request with this idempotency key was processed, but its result "
			+ "was not stored, so it cannot be returned again; it is not processed again for this key";

	private StoredOutcome() {
	}

	static StoredResult value(IdempotencyPolicy policy, String clientKey, @Nullable Object value, long maxResultSize,
			ResultCompression compression) {
		ResultBuffer out = new ResultBuffer(VALUE, maxResultSize);
		try {
			policy.codec().encode(value, out);
		}
		catch (RuntimeException ex) {
			logger.error("Result of " + policy.name() + " for key '" + clientKey
					+ "' cannot be encoded; retries with this key get an error instead of a replay", ex);
			return notStored("it could not be encoded: " + ex.getMessage());
		}
		if (out.written > maxResultSize) {
			return tooLarge("Result", policy, clientKey, out.written, maxResultSize);
		}
		return compression.compress(new StoredResult(out.toByteArray()));
	}

	/** A body above {@code maxResultSize} is not kept, as a value would not be. */
	static StoredResult recorded(IdempotencyPolicy policy, String clientKey, RecordedResponse response,
			long maxResultSize, ResultCompression compression) {
		if (response.body().length > maxResultSize) {
			return tooLarge("Response", policy, clientKey, response.body().length, maxResultSize);
		}
		return response.toStoredResult(compression);
	}

	private static StoredResult tooLarge(String what, IdempotencyPolicy policy, String clientKey, long size,
			long maxResultSize) {
		logger.error(what + " of " + policy.name() + " for key '" + clientKey + "' is " + size
				+ " bytes, above idempotent.max-result-size=" + maxResultSize
				+ "; retries with this key get an error instead of a replay");
		return notStored(size + " bytes, above idempotent.max-result-size");
	}

	static @Nullable RecordedResponse recordedResponse(StoredResult result, long maxResultSize) {
		try {
			return RecordedResponse.read(result, maxResultSize);
		}
		catch (IllegalArgumentException ex) {
			throw new DamagedOutcomeException("its recorded response cannot be read: " + ex.getMessage());
		}
	}

	static StoredResult error(Throwable ex) {
		return new StoredResult(concat(ERROR, ex.getClass().getName() + "\n" + Objects.toString(ex.getMessage(), "")));
	}

	/**
	 * Retries get an error, never a second run. Keep {@code reason} short: a full Redis
	 * takes a record no bigger than its placeholder (RedisIdempotencyStore.SMALL_RECORD).
	 */
	static StoredResult notStored(String reason) {
		return new StoredResult(concat(UNSTORABLE, reason));
	}

	private static byte[] concat(byte marker, String text) {
		byte[] utf8 = text.getBytes(StandardCharsets.UTF_8);
		return ByteBuffer.allocate(utf8.length + 1).put(marker).put(utf8).array();
	}

	/**
	 * Whether {@code ex} is stored rather than released: its exact class is listed in
	 * {@code cacheFor} and {@link #replay} can recreate it with the same message.
	 */
	static boolean isStored(IdempotencyPolicy policy, String clientKey, Throwable ex) {
		if (!policy.cacheFor().contains(ex.getClass())) {
			if (policy.cacheFor().stream().anyMatch((type) -> type.isInstance(ex))) {
				logger.warn(ex.getClass().getName() + " thrown by " + policy.name() + " for key '" + clientKey
						+ "' is a subclass of a type listed in cacheFor, but only the listed types themselves are "
						+ "stored (a replay recreates its exception by class name); the key was released, so a "
						+ "retry runs the method again. List the class in cacheFor to store it");
			}
			return false;
		}
		String message = Objects.toString(ex.getMessage(), "");
		try {
			Throwable recreated = instantiate(ex.getClass(), message);
			if (recreated.getClass() == ex.getClass() && Objects.toString(recreated.getMessage(), "").equals(message)) {
				return true;
			}
		}
		catch (ReflectiveOperationException | RuntimeException | LinkageError failure) {
			// Told below, as a type that cannot be recreated.
		}
		logger.warn(ex.getClass().getName() + " thrown by " + policy.name() + " for key '" + clientKey
				+ "' is listed in cacheFor but cannot be recreated with its message (it needs a public constructor "
				+ "taking a String message, or none); the key was released, so a retry runs the method again");
		return false;
	}

	/** The value a stored outcome replays, or the exception it rethrows. */
	static @Nullable Object replay(IdempotencyPolicy policy, String clientKey, StoredResult result, long maxResultSize)
			throws Throwable {
		byte[] bytes = result.bytes();
		if (bytes.length == 0) {
			throw new DamagedOutcomeException("its stored result is empty");
		}
		if (bytes[0] >= 0x01 && bytes[0] <= 0x1F) {
			throw new LaterFormatException(String
				.format("its stored outcome starts with 0x%02x, which format 1 reserves for later formats", bytes[0]));
		}
		if (bytes[0] == VALUE) {
			return decode(policy, clientKey, bytes, 1, bytes.length - 1);
		}
		if (ResultCompression.isDeflated(bytes)) {
			byte[] encoded;
			try {
				encoded = ResultCompression.inflate(bytes, maxResultSize);
			}
			catch (IllegalArgumentException ex) {
				throw new DamagedOutcomeException("its compressed result cannot be inflated: " + ex.getMessage());
			}
			return decode(policy, clientKey, encoded, 0, encoded.length);
		}
		String text = new String(bytes, 1, bytes.length - 1, StandardCharsets.UTF_8);
		if (bytes[0] == ERROR) {
			if (text.indexOf('\n') < 0) {
				throw new DamagedOutcomeException("its stored error has no line between type and message");
			}
			throw storedError(policy, clientKey, text);
		}
		if (bytes[0] != UNSTORABLE) {
			throw new DamagedOutcomeException(String
				.format("its result starts with 0x%02x, none of the outcome markers this version writes or reads "
						+ "('V', 'Z', 'H', 'J' to 'Q', 'E', 'X')", bytes[0] & 0xFF));
		}
		throw new IdempotencyResultException(NOT_STORED, "The result of " + policy.name() + " for key '" + clientKey
				+ "' was not stored (" + text + "); the call ran once and is not run again for this key", null);
	}

	private static @Nullable Object decode(IdempotencyPolicy policy, String clientKey, byte[] bytes, int offset,
			int length) {
		try {
			return policy.codec().decode(bytes, offset, length);
		}
		catch (RuntimeException ex) {
			throw new IdempotencyResultException("Stored result of " + policy.name() + " for key '" + clientKey
					+ "' does not decode into the method's return type (was it changed since?); "
					+ "the call is not run again. Send a new key to run it", ex);
		}
	}

	private static Throwable storedError(IdempotencyPolicy policy, String clientKey, String text) {
		int newline = text.indexOf('\n');
		String typeName = text.substring(0, newline);
		String message = text.substring(newline + 1);
		// Only the listed types are instantiated, by exact name: a record written by
		// someone else must not load a class whose constructor it could run.
		for (Class<? extends Throwable> allowed : policy.cacheFor()) {
			if (allowed.getName().equals(typeName)) {
				try {
					return instantiate(allowed, message);
				}
				catch (ReflectiveOperationException | LinkageError ex) {
					break;
				}
			}
		}
		return new IdempotencyResultException("Stored error " + typeName + " of " + policy.name() + " for key '"
				+ clientKey + "' is no longer listed in cacheFor or cannot be created: " + message);
	}

	private static Throwable instantiate(Class<?> type, String message) throws ReflectiveOperationException {
		try {
			return (Throwable) ReflectionUtils.accessibleConstructor(type, String.class).newInstance(message);
		}
		catch (NoSuchMethodException ex) {
			return (Throwable) ReflectionUtils.accessibleConstructor(type).newInstance();
		}
	}

	static boolean isRecreatable(Class<? extends Throwable> type) {
		return Stream.of(type.getDeclaredConstructors())
			.map(Constructor::getParameterTypes)
			.anyMatch((parameters) -> parameters.length == 0
					|| Arrays.equals(parameters, new Class<?>[] { String.class }));
	}

	/** A stored outcome that cannot be read; no stack trace: it shows only the reader. */
	static class DamagedOutcomeException extends RuntimeException {

		DamagedOutcomeException(String damage) {
			super(damage, null, false, false);
		}

	}

	static final class LaterFormatException extends DamagedOutcomeException {

		LaterFormatException(String damage) {
			super(damage);
		}

	}

	/** The marker and encoded result; bytes past {@code limit} are counted only. */
	private static final class ResultBuffer extends ByteArrayOutputStream {

		private final long limit;

		private long written = 1;

		ResultBuffer(byte marker, long limit) {
			this.limit = limit;
			super.write(marker);
		}

		@Override
		public void write(int b) {
			write(new byte[] { (byte) b }, 0, 1);
		}

		@Override
		public synchronized void write(byte[] b, int off, int len) {
			this.written += len;
			if (this.written <= this.limit) {
				super.write(b, off, len);
			}
		}

	}

}
