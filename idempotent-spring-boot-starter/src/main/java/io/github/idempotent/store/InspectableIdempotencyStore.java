package io.github.idempotent.store;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

import org.jspecify.annotations.Nullable;

/**
 * Optional extension of {@link IdempotencyStore} for operators: read one record, find the
 * records still in progress, delete one. The protocol never calls these methods; the
 * Actuator endpoint {@code idempotency} does. Reads are single-key or bounded pages, so
 * that an operator's request never walks a whole store at once.
 */
public interface InspectableIdempotencyStore extends IdempotencyStore {

	/**
	 * The record stored under {@code key}, if there is a live one.
	 */
	Optional<IdempotencyRecord> inspect(RecordKey key);

	/**
	 * One page of the records in progress under keys starting with {@code keyPrefix} and
	 * {@code :}, claimed at least {@code olderThan} ago; records whose claim time is
	 * unknown are included. A page examines about {@code limit} records (the store's unit
	 * of work: keys on Redis, in-progress rows on JDBC), so it may hold fewer than
	 * {@code limit} records, even none, and still not be the last.
	 * @param cursor {@code null} for the first page, else the
	 * {@link InProgressPage#cursor()} of the previous one
	 */
	InProgressPage findInProgress(String keyPrefix, Duration olderThan, @Nullable String cursor, int limit);

	/**
	 * Deletes the record stored under {@code key}, whatever its state. A call still
	 * running under it is not stopped: its completion finds the record gone and writes
	 * its result anew, unless a retry has claimed the key meanwhile (then its result is
	 * fenced out, as after a lost lease).
	 * @return whether there was a record
	 */
	boolean delete(RecordKey key);

	/**
	 * Deletes the record stored under {@code key} unless a call is still running under it
	 * with its lease held: completed records, and records whose owner's lease ran out.
	 * The shipped stores decide and delete in one atomic step, so a claim that arrives
	 * meanwhile is never deleted. This default reads, then deletes: a store of its own
	 * should override it with one atomic step.
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
	 * Deletes the record stored under {@code key} only if it is still in progress,
	 * whether or not its owner holds the lease: for an operator who has seen the call
	 * hang and must not delete the result it may store meanwhile. The deletion must win
	 * over the owner, which may be alive: the shipped stores replace the record, in one
	 * atomic step, by a tombstone of the owner's token that lives at least as long as the
	 * lease it had, so that the owner's renewals, completion and release fail from then
	 * on instead of writing the vanished record anew; a claim takes the tombstone as
	 * free, and {@link #inspect}, {@link #findInProgress} and the other deletions see no
	 * record there. This default reads, then deletes, and leaves no tombstone: a store of
	 * its own should override it.
	 * @return what was done: {@link Deletion#COMPLETED} when the record holds a result,
	 * which is kept
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

	/**
	 * What {@link #deleteUnlessHeld} or {@link #deleteInProgress} did.
	 */
	enum Deletion {

		/** The record was deleted. */
		DELETED,

		/** There was no record. */
		NONE,

		/** A call holds the key under its lease: nothing was deleted. */
		HELD,

		/** The record holds a result, which {@link #deleteInProgress} keeps. */
		COMPLETED

	}

	/**
	 * A page of {@link #findInProgress}.
	 *
	 * @param records the records of this page
	 * @param cursor where the next page starts, {@code null} when this page is the last
	 */
	record InProgressPage(List<IdempotencyRecord> records, @Nullable String cursor) {

		public InProgressPage {
			records = List.copyOf(records);
		}

	}

}
