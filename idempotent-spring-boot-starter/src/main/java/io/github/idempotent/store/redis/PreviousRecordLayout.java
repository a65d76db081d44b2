package io.github.idempotent.store.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.util.StringUtils;

import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.IdempotencyRecord;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.StoredResult;

/**
 * Records of the layout before {@link RecordLayout}: one hash per record, with the fields
 * {@code s} (the state, {@code P} or {@code C}), {@code t} (the owner's token, 32 hex
 * digits), {@code f} (the fingerprint as text) and {@code r} (the result as it was
 * stored). Instances of the versions that wrote them may still run during a rolling
 * upgrade, and their results must replay until they expire: the claim and inspect scripts
 * read the fields ({@code HMGET}), and this class reads what they answer, with no claim
 * time (that layout had none). Nothing writes a hash any more; the fenced scripts leave
 * one in progress to its owner, whose token never equals one of this version (see
 * {@link RedisScripts}).
 * <p>
 * Placeholders and tombstones of the previous string layout (a placeholder ending with
 * its claim time alone, a tombstone of {@code D} and the deleted owner's token) share
 * this layout's offsets and are told apart by {@link RecordLayout}.
 */
final class PreviousRecordLayout {

	private static final String NO_FINGERPRINT = "it is a hash without the fingerprint field (f) of the previous layout, or with a blank one";

	private static final String NO_RESULT = "it is a hash without the result field (r) of the previous layout";

	private PreviousRecordLayout() {
	}

	/**
	 * What the claim script answers for a hash: {@code {4, f, PTTL}} in progress,
	 * {@code {5, f, r}} completed. A hash without its fingerprint or, completed, its
	 * result is not a record of that layout.
	 */
	static ClaimResult claimResult(boolean inProgress, List<?> reply) {
		byte[] fingerprint = (byte[]) reply.get(1);
		if (isBlank(fingerprint)) {
			return new ClaimResult.Damaged(NO_FINGERPRINT);
		}
		Fingerprint stored = fingerprint(fingerprint);
		if (inProgress) {
			return new ClaimResult.InProgress(stored, Duration.ofMillis(Math.max(0, (Long) reply.get(2))));
		}
		byte[] result = (reply.size() > 2) ? (byte[]) reply.get(2) : null;
		if (result == null) {
			return new ClaimResult.Damaged(NO_RESULT);
		}
		return new ClaimResult.Completed(stored, new StoredResult(result));
	}

	/**
	 * What the inspect script answers for a hash, {@code {2, PTTL, s, f, r}}, as a record
	 * with no claim time.
	 */
	static IdempotencyRecord record(RecordKey key, List<?> reply, @Nullable Duration expiresIn) {
		boolean inProgress = "P".equals(new String((byte[]) reply.get(2), StandardCharsets.UTF_8));
		byte[] storedFingerprint = (byte[]) reply.get(3);
		if (isBlank(storedFingerprint)) {
			return IdempotencyRecord.unreadable(key, NO_FINGERPRINT, expiresIn);
		}
		StoredResult result = (!inProgress && reply.size() > 4) ? new StoredResult((byte[]) reply.get(4)) : null;
		return new IdempotencyRecord(key,
				inProgress ? IdempotencyRecord.State.IN_PROGRESS : IdempotencyRecord.State.COMPLETED,
				fingerprint(storedFingerprint), null, expiresIn, result);
	}

	/**
	 * Whether a fingerprint field is missing or blank: no payload has a blank fingerprint
	 * ({@link Fingerprint} refuses one).
	 */
	private static boolean isBlank(byte @Nullable [] text) {
		return text == null || !StringUtils.hasText(new String(text, StandardCharsets.UTF_8));
	}

	private static Fingerprint fingerprint(byte[] text) {
		return new Fingerprint(new String(text, StandardCharsets.UTF_8));
	}

}
