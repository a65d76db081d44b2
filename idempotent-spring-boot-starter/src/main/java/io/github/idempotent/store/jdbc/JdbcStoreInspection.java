package io.github.idempotent.store.jdbc;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.core.JdbcOperations;
import org.springframework.util.Assert;

import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.IdempotencyRecord;
import io.github.idempotent.store.InspectableIdempotencyStore.Deletion;
import io.github.idempotent.store.InspectableIdempotencyStore.InProgressPage;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.StoredResult;

/**
 * What an operator sees and does through the Actuator on a {@link JdbcIdempotencyStore}.
 */
final class JdbcStoreInspection {

	private static final String BLANK_FINGERPRINT = "the row's fingerprint is blank";

	private final JdbcOperations jdbc;

	private final JdbcStatements sql;

	private final OwnTransaction ownTransaction;

	JdbcStoreInspection(JdbcOperations jdbc, JdbcStatements sql, OwnTransaction ownTransaction) {
		this.jdbc = jdbc;
		this.sql = sql;
		this.ownTransaction = ownTransaction;
	}

	Optional<IdempotencyRecord> inspect(RecordKey key) {
		RecordRow row = RecordRow.select(this.jdbc, this.sql, key.value());
		if (row == null || row.expired() || row.tombstone()) {
			return Optional.empty();
		}
		Fingerprint fingerprint = RecordRow.fingerprintOf(row.fingerprint());
		if (fingerprint == null) {
			return Optional.of(IdempotencyRecord.unreadable(key, BLANK_FINGERPRINT,
					Duration.ofMillis(Math.max(0, row.millisLeft()))));
		}
		return Optional.of(new IdempotencyRecord(key,
				row.completed() ? IdempotencyRecord.State.COMPLETED : IdempotencyRecord.State.IN_PROGRESS, fingerprint,
				row.completed() ? null : ClaimToken.claimedAt(row.token()),
				Duration.ofMillis(Math.max(0, row.millisLeft())),
				row.completed() ? new StoredResult(row.result()) : null));
	}

	/**
	 * Keyset pages by key through the in-progress index; the age is filtered here, since
	 * the claim time is in the token.
	 */
	InProgressPage findInProgress(String keyPrefix, Duration olderThan, @Nullable String cursor, int limit) {
		Assert.isTrue(limit > 0, "limit must be positive");
		String prefix = keyPrefix + ":";
		Instant now = Instant.now();
		List<String> examined = new ArrayList<>();
		List<IdempotencyRecord> records = new ArrayList<>();
		this.jdbc.query(this.sql.inProgress, (rs) -> {
			String key = rs.getString(1);
			examined.add(key);
			if (!key.startsWith(prefix)) {
				return;
			}
			Fingerprint fingerprint = RecordRow.fingerprintOf(rs.getString(3));
			Duration expiresIn = Duration.ofMillis(Math.max(0, rs.getLong(4)));
			IdempotencyRecord record = (fingerprint != null)
					? new IdempotencyRecord(new RecordKey(key), IdempotencyRecord.State.IN_PROGRESS, fingerprint,
							ClaimToken.claimedAt(rs.getString(2)), expiresIn, null)
					: IdempotencyRecord.unreadable(new RecordKey(key), BLANK_FINGERPRINT, expiresIn);
			Duration age = record.age(now);
			if (age == null || age.compareTo(olderThan) >= 0) {
				records.add(record);
			}
		}, (cursor != null) ? cursor : "", limit);
		return new InProgressPage(records, (examined.size() == limit) ? examined.get(limit - 1) : null);
	}

	boolean delete(RecordKey key) {
		return this.ownTransaction.run(() -> this.jdbc.update(this.sql.delete, key.value()) > 0);
	}

	Deletion deleteInProgress(RecordKey key) {
		return deleteWhere(this.sql.deleteInProgress, key, Deletion.COMPLETED);
	}

	Deletion deleteUnlessHeld(RecordKey key) {
		return deleteWhere(this.sql.deleteUnlessHeld, key, Deletion.HELD);
	}

	private Deletion deleteWhere(String deleteSql, RecordKey key, Deletion kept) {
		return this.ownTransaction.run(() -> {
			if (this.jdbc.update(deleteSql, key.value()) > 0) {
				return Deletion.DELETED;
			}
			return (this.jdbc.queryForObject(this.sql.recordExists, Integer.class, key.value()) > 0) ? kept
					: Deletion.NONE;
		});
	}

}
