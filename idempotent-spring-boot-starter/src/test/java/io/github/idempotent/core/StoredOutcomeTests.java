package io.github.idempotent.core;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import io.github.idempotent.store.StoredResult;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * What a stored outcome ({@link StoredOutcome}) replays: a value read back identically, a
 * result too large or not encodable as "not stored" (never a second run), a
 * {@code cacheFor} exception recreated only when it can be with its message, and a
 * damaged record told apart from one of a later format.
 */
@ExtendWith(OutputCaptureExtension.class)
class StoredOutcomeTests {

	private static final ResultCompression NO_COMPRESSION = ResultCompression.none();

	/** Encodes a string one byte at a time, as a codec writing by single bytes would. */
	private static final ResultCodec.Binding BYTES = new ResultCodec.Binding() {

		@Override
		public void encode(Object value, OutputStream out) {
			try {
				for (byte b : ((String) value).getBytes(StandardCharsets.UTF_8)) {
					out.write(b);
				}
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}

		@Override
		public Object decode(byte[] bytes, int offset, int length) {
			String text = new String(bytes, offset, length, StandardCharsets.UTF_8);
			if (text.startsWith("undecodable")) {
				throw new IllegalArgumentException("not a string of this type");
			}
			return text;
		}

	};

	private static final IdempotencyPolicy POLICY = policy(List.of(Declined.class, NoMessage.class,
			MessageChanged.class, CauseOnly.class, FailsToConstruct.class, IllegalStateException.class));

	@Test
	void aValueIsReadBackIdenticallyWhenItsEncodingTakesUpToMaxResultSize() throws Throwable {
		// The marker byte counts: "receipt" takes 8 bytes.
		StoredResult stored = StoredOutcome.value(POLICY, "k", "receipt", 8, NO_COMPRESSION);
		assertThat(stored.bytes()).isEqualTo(bytes("Vreceipt"));
		assertThat(StoredOutcome.replay(POLICY, "k", stored, 8)).isEqualTo("receipt");
	}

	@Test
	void aValueAboveMaxResultSizeIsNotStoredAndItsRetryGetsAnErrorNeverARun() {
		StoredResult stored = StoredOutcome.value(POLICY, "k", "receipt", 7, NO_COMPRESSION);
		assertThat(new String(stored.bytes(), StandardCharsets.UTF_8))
			.isEqualTo("X8 bytes, above idempotent.max-result-size");
		assertThatExceptionOfType(IdempotencyResultException.class)
			.isThrownBy(() -> StoredOutcome.replay(POLICY, "k", stored, 7))
			.withMessageContaining("was not stored (8 bytes, above idempotent.max-result-size)");
	}

	@Test
	void aValueThatCannotBeEncodedIsNotStored() {
		StoredResult stored = StoredOutcome.value(POLICY, "k", 42, 1024, NO_COMPRESSION);
		assertThatExceptionOfType(IdempotencyResultException.class)
			.isThrownBy(() -> StoredOutcome.replay(POLICY, "k", stored, 1024))
			.withMessageContaining("it could not be encoded: ");
	}

	@Test
	void aStoredValueThatNoLongerDecodesIsAResultErrorNeverARun() {
		StoredResult stored = StoredOutcome.value(POLICY, "k", "undecodable", 1024, NO_COMPRESSION);
		assertThatExceptionOfType(IdempotencyResultException.class)
			.isThrownBy(() -> StoredOutcome.replay(POLICY, "k", stored, 1024))
			.withMessageContaining("does not decode into the method's return type")
			.withCauseInstanceOf(IllegalArgumentException.class);
	}

	@Test
	void aCompressedValueIsReadBackIdentically() throws Throwable {
		String large = "line item of order ORD-2;".repeat(40);
		StoredResult stored = StoredOutcome.value(POLICY, "k", large, 4096, ResultCompression.deflate(64));
		assertThat(stored.bytes().length).isLessThan(large.length());
		assertThat(StoredOutcome.replay(POLICY, "k", stored, 4096)).isEqualTo(large);
	}

	@Test
	void aRecordedResponseIsKeptUpToMaxResultSize() {
		RecordedResponse response = new RecordedResponse(201, Map.of("Location", List.of("/p/1")), bytes("12345"));
		StoredResult stored = StoredOutcome.recorded(POLICY, "k", response, 5, NO_COMPRESSION);
		assertThat(StoredOutcome.recordedResponse(stored, 1024)).isEqualTo(response);
		StoredResult tooLarge = StoredOutcome.recorded(POLICY, "k", response, 4, NO_COMPRESSION);
		assertThat(new String(tooLarge.bytes(), StandardCharsets.UTF_8))
			.isEqualTo("X5 bytes, above idempotent.max-result-size");
		assertThat(StoredOutcome.recordedResponse(tooLarge, 1024)).isNull();
	}

	@Test
	void aDamagedRecordedResponseIsADamagedOutcome() {
		byte[] damaged = StoredOutcome
			.recorded(POLICY, "k", new RecordedResponse(200, Map.of(), bytes("body")), 1024, NO_COMPRESSION)
			.bytes();
		StoredResult truncated = new StoredResult(Arrays.copyOf(damaged, 2));
		assertThatExceptionOfType(StoredOutcome.DamagedOutcomeException.class)
			.isThrownBy(() -> StoredOutcome.recordedResponse(truncated, 1024))
			.withMessageStartingWith("its recorded response cannot be read: ");
	}

	@Test
	void aListedExceptionIsStoredAndReplaysAsTheSameClassWithTheSameMessage() {
		Declined declined = new Declined("card declined");
		assertThat(StoredOutcome.isStored(POLICY, "k", declined)).isTrue();
		StoredResult stored = StoredOutcome.error(declined);
		assertThat(stored.bytes()).isEqualTo(bytes("E" + Declined.class.getName() + "\ncard declined"));
		assertThatExceptionOfType(Declined.class).isThrownBy(() -> StoredOutcome.replay(POLICY, "k", stored, 1024))
			.withMessage("card declined");
	}

	@Test
	void anExceptionWithoutAMessageIsStoredThroughItsNoArgumentConstructor() {
		NoMessage error = new NoMessage();
		assertThat(StoredOutcome.isStored(POLICY, "k", error)).isTrue();
		StoredResult stored = StoredOutcome.error(error);
		assertThat(stored.bytes()).isEqualTo(bytes("E" + NoMessage.class.getName() + "\n"));
		assertThatExceptionOfType(NoMessage.class).isThrownBy(() -> StoredOutcome.replay(POLICY, "k", stored, 1024));
	}

	@Test
	void anExceptionThatCannotBeRecreatedWithItsMessageIsReleasedNotStored() {
		assertThat(StoredOutcome.isStored(POLICY, "k", new MessageChanged("declined"))).isFalse();
		assertThat(StoredOutcome.isStored(POLICY, "k", new CauseOnly(new IllegalStateException("declined")))).isFalse();
		assertThat(StoredOutcome.isStored(POLICY, "k", FailsToConstruct.thrown("declined"))).isFalse();
	}

	@Test
	void onlyTheListedClassItselfIsStoredNeverASubclassOrAnUnlistedOne(CapturedOutput output) {
		String subclassWarning = "is a subclass of a type listed in cacheFor";
		assertThat(StoredOutcome.isStored(POLICY, "k", new IllegalArgumentException("declined"))).isFalse();
		assertThat(StoredOutcome.isStored(POLICY, "k", new IllegalStateException("declined"))).isTrue();
		assertThat(output).doesNotContain(subclassWarning);
		// A subclass is released, and the log says why and what to list.
		assertThat(StoredOutcome.isStored(POLICY, "k", new DeclinedTwice("declined"))).isFalse();
		assertThat(output).contains(DeclinedTwice.class.getName() + " thrown by op for key 'k' " + subclassWarning);
	}

	@Test
	void whichExceptionTypesCanBeRecreated() {
		assertThat(StoredOutcome.isRecreatable(Declined.class)).isTrue();
		assertThat(StoredOutcome.isRecreatable(NoMessage.class)).isTrue();
		assertThat(StoredOutcome.isRecreatable(CauseOnly.class)).isFalse();
	}

	@Test
	void aStoredErrorNoLongerListedOrThatCannotBeCreatedIsAResultError() {
		IdempotencyPolicy unlisted = policy(List.of(IllegalStateException.class));
		StoredResult declined = StoredOutcome.error(new Declined("card declined"));
		assertThatExceptionOfType(IdempotencyResultException.class)
			.isThrownBy(() -> StoredOutcome.replay(unlisted, "k", declined, 1024))
			.withMessageContaining("Stored error " + Declined.class.getName())
			.withMessageEndingWith(": card declined");
		StoredResult failing = StoredOutcome.error(FailsToConstruct.thrown("x"));
		assertThatExceptionOfType(IdempotencyResultException.class)
			.isThrownBy(() -> StoredOutcome.replay(POLICY, "k", failing, 1024))
			.withMessageContaining("Stored error " + FailsToConstruct.class.getName());
		// A line but no type: read, and no type of cacheFor has an empty name.
		assertThatExceptionOfType(IdempotencyResultException.class)
			.isThrownBy(() -> StoredOutcome.replay(POLICY, "k", new StoredResult(bytes("E\ncard declined")), 1024))
			.withMessageEndingWith(": card declined");
	}

	@Test
	void aDamagedRecordIsADamagedOutcomeAndAReservedMarkerALaterFormat() {
		assertDamaged(new byte[0], "its stored result is empty");
		assertThatExceptionOfType(StoredOutcome.LaterFormatException.class)
			.isThrownBy(() -> StoredOutcome.replay(POLICY, "k", new StoredResult(new byte[] { 0x01, 'x' }), 1024))
			.withMessage("its stored outcome starts with 0x01, which format 1 reserves for later formats");
		assertThatExceptionOfType(StoredOutcome.LaterFormatException.class)
			.isThrownBy(() -> StoredOutcome.replay(POLICY, "k", new StoredResult(new byte[] { 0x1F }), 1024))
			.withMessageContaining("0x1f");
		assertThat(damage(new byte[] { 0x00, 'x' })).isNotInstanceOf(StoredOutcome.LaterFormatException.class)
			.hasMessageStartingWith("its result starts with 0x00, none of the outcome markers");
		assertThat(damage(new byte[] { 0x20, 'x' })).isNotInstanceOf(StoredOutcome.LaterFormatException.class)
			.hasMessageStartingWith("its result starts with 0x20");
		assertThat(damage(new byte[] { (byte) 0xC3, 'x' })).hasMessageStartingWith("its result starts with 0xc3");
		assertDamaged(bytes("Ejava.lang.IllegalStateException"),
				"its stored error has no line between type and message");
		assertThat(damage(new byte[] { 'Z', 0, 0, 0, 5, 1, 2, 3 }))
			.hasMessageStartingWith("its compressed result cannot be inflated: ");
	}

	private static void assertDamaged(byte[] record, String damage) {
		assertThat(damage(record)).hasMessage(damage);
	}

	private static Throwable damage(byte[] record) {
		try {
			StoredOutcome.replay(POLICY, "k", new StoredResult(record), 1024);
		}
		catch (StoredOutcome.DamagedOutcomeException ex) {
			return ex;
		}
		catch (Throwable ex) {
			throw new AssertionError("not a damaged outcome: " + ex, ex);
		}
		throw new AssertionError("replayed");
	}

	private static IdempotencyPolicy policy(List<Class<? extends Throwable>> cacheFor) {
		return new IdempotencyPolicy("op", Duration.ofMinutes(1), Duration.ofSeconds(30), Duration.ZERO,
				Duration.ofSeconds(1), cacheFor, BYTES);
	}

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	public static class Declined extends RuntimeException {

		public Declined(String message) {
			super(message);
		}

	}

	public static class DeclinedTwice extends Declined {

		public DeclinedTwice(String message) {
			super(message);
		}

	}

	public static class NoMessage extends RuntimeException {

		public NoMessage() {
		}

	}

	public static class MessageChanged extends RuntimeException {

		public MessageChanged(String message) {
			super("changed: " + message);
		}

	}

	public static class CauseOnly extends RuntimeException {

		public CauseOnly(Throwable cause) {
			super(cause);
		}

	}

	/** Thrown by the method; its public constructor, which a replay would use, fails. */
	public static class FailsToConstruct extends RuntimeException {

		public FailsToConstruct(String message) {
			super(message);
			throw new IllegalStateException("cannot be created from a message");
		}

		private FailsToConstruct(String message, boolean thrown) {
			super(message);
		}

		static FailsToConstruct thrown(String message) {
			return new FailsToConstruct(message, true);
		}

	}

}
