package io.github.idempotent.store;

import java.time.Duration;
import java.time.Instant;

import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;

/**
 * One record as an {@link InspectableIdempotencyStore} reads it, for operators: never
 * used by the protocol.
 *
 * @param key the record key
 * @param state whether the call is still running or has completed
 * @param fingerprint the fingerprint of the payload the key was first used with
 * @param claimedAt when the running call claimed the key, by the claiming instance's
 * clock, to the second; {@code null} when the store does not know (a completed record, or
 * a store that keeps no claim time)
 * @param expiresIn the lease left while in progress, the time left before the result is
 * forgotten once completed; {@code null} for a record without expiry
 * @param result the stored result of a completed record, {@code null} in progress
 * @param damage what keeps an {@link State#UNREADABLE unreadable} record from being read,
 * {@code null} for any other
 */
public record IdempotencyRecord(RecordKey key, State state, @Nullable Fingerprint fingerprint,
		@Nullable Instant claimedAt, @Nullable Duration expiresIn, @Nullable StoredResult result,
		@Nullable String damage) {

	public IdempotencyRecord {
		Assert.notNull(key, "key must not be null");
		Assert.notNull(state, "state must not be null");
		Assert.isTrue((state == State.UNREADABLE) == (fingerprint == null),
				"fingerprint must be given unless the record is unreadable");
		Assert.isTrue((state == State.UNREADABLE) == (damage != null),
				"damage must be given for an unreadable record only");
	}

	/**
	 * A record that can be read.
	 */
	public IdempotencyRecord(RecordKey key, State state, Fingerprint fingerprint, @Nullable Instant claimedAt,
			@Nullable Duration expiresIn, @Nullable StoredResult result) {
		this(key, state, fingerprint, claimedAt, expiresIn, result, null);
	}

	/**
	 * What the store found under {@code key} and cannot read as a record ({@code damage}
	 * says why): shown to operators rather than failing their whole request.
	 */
	public static IdempotencyRecord unreadable(RecordKey key, String damage, @Nullable Duration expiresIn) {
		Assert.hasText(damage, "damage must not be empty");
		return new IdempotencyRecord(key, State.UNREADABLE, null, null, expiresIn, null, damage);
	}

	/**
	 * Whether a call still holds the key: in progress, with lease left (or none known).
	 */
	public boolean isLeaseHeld() {
		return this.state == State.IN_PROGRESS
				&& (this.expiresIn == null || !(this.expiresIn.isNegative() || this.expiresIn.isZero()));
	}

	/**
	 * How long ago the key was claimed, or {@code null} when the claim time is unknown;
	 * never negative, whatever the clocks of the instances say.
	 */
	public @Nullable Duration age(Instant now) {
		if (this.claimedAt == null) {
			return null;
		}
		Duration age = Duration.between(this.claimedAt, now);
		return age.isNegative() ? Duration.ZERO : age;
	}

	/**
	 * State of a record.
	 */
	public enum State {

		/** A call holds the key and has not finished. */
		IN_PROGRESS,

		/** The call has finished; its result is replayed. */
		COMPLETED,

		/**
		 * The store cannot read what the key holds (overwritten, truncated, another
		 * type); calls with the key are answered that their result is unavailable, never
		 * run.
		 */
		UNREADABLE

	}

}
