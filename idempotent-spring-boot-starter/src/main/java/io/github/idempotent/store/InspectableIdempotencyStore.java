package io.github.idempotent.store;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

import org.jspecify.annotations.Nullable;

/**
 * Optional extension of {@link IdempotencyStore} for operators (the Actuator endpoint):
 * read one record, find the records in progress, delete one.
 */
public interface InspectableIdempotencyStore extends IdempotencyStore {

	/** The record stored under {@code key}, if there is a live one. */
	Optional<IdempotencyRecord> inspect(RecordKey key);

	/**
	 * One page of the records in progress under {@code keyPrefix:}, claimed at least
	 * {@code olderThan} ago (or at an unknown time). A page examines about {@code limit}
	 * records, so it may hold fewer, even none, and still not be the last.
	 * @param cursor {@code null} for the first page, else the
	 * {@link InProgressPage#cursor()} of the previous one
	 */
	InProgressPage findInProgress(String keyPrefix, Duration olderThan, @Nullable String cursor, int limit);

	/**
	 * Deletes the record under {@code key}, whatever its state; a call still running is
	 * not stopped.
	 * @return whether there was a record
	 */
	boolean delete(RecordKey key);

	/**
	 * Deletes the record under {@code key} unless a call holds its lease. This default
	 * reads, then deletes: a store should override it with one atomic step.
	 * @return what was done
	 */
	default Deletion deleteUnlessHeld(RecordKey key) {
		Optional<IdempotencyRecord> record = inspect(key);
		if (record.isPresent() && record.get().isLeaseHeld()) {
			return Deletion.HELD;
		}
		return delete(key) ? Deletion.DELETED : Deletion.NONE;
	}

	/**
	 * Deletes the record under {@code key} only if it is still in progress, lease held or
	 * not. The shipped stores leave a tombstone of the owner's token, so that the owner's
	 * renewals, completion and release fail instead of writing the record anew; a claim
	 * takes the tombstone as free. This default reads, then deletes, and leaves no
	 * tombstone: a store should override it.
	 * @return {@link Deletion#COMPLETED} when the record holds a result, which is kept
	 */
	default Deletion deleteInProgress(RecordKey key) {
		Optional<IdempotencyRecord> record = inspect(key);
		if (record.isEmpty()) {
			return Deletion.NONE;
		}
		if (record.get().state() == IdempotencyRecord.State.COMPLETED) {
			return Deletion.COMPLETED;
		}
		return delete(key) ? Deletion.DELETED : Deletion.NONE;
	}

	/** What {@link #deleteUnlessHeld} or {@link #deleteInProgress} did. */
	enum Deletion {

		DELETED,

		NONE,

		/** A call holds the key under its lease: nothing was deleted. */
		HELD,

		/** The record holds a result, which {@link #deleteInProgress} keeps. */
		COMPLETED

	}

	/**
	 * A page of {@link #findInProgress}.
	 *
	 * @param cursor where the next page starts, {@code null} after the last
	 */
	record InProgressPage(List<IdempotencyRecord> records, @Nullable String cursor) {

		public InProgressPage {
			records = List.copyOf(records);
		}

	}

}
