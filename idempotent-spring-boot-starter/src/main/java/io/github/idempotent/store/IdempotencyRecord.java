package io.github.idempotent.store;

import java.time.Duration;
import java.time.Instant;

import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;

/**
 * One record as an {@link InspectableIdempotencyStore} reads it, for operators.
 *
 * @param key the record key
 * @param state whether the call is still running or has completed
 * @param fingerprint the fingerprint of the payload the key was first used with
 * @param claimedAt when the running call claimed the key, by the claiming instance's
 * clock; {@code null} when unknown
 * @param expiresIn the lease left while in progress, the TTL left once completed;
 * {@code null} for a record without expiry
 * @param result the stored result of a completed record, {@code null} in progress
 * @param damage why an {@link State#UNREADABLE unreadable} record cannot be read
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

	/** A record that can be read. */
	public IdempotencyRecord(RecordKey key, State state, Fingerprint fingerprint, @Nullable Instant claimedAt,
			@Nullable Duration expiresIn, @Nullable StoredResult result) {
		this(key, state, fingerprint, claimedAt, expiresIn, result, null);
	}

	/** What the store found under {@code key} and cannot read as a record. */
	public static IdempotencyRecord unreadable(RecordKey key, String damage, @Nullable Duration expiresIn) {
		Assert.hasText(damage, "damage must not be empty");
		return new IdempotencyRecord(key, State.UNREADABLE, null, null, expiresIn, null, damage);
	}

	/** Whether a call still holds the key: in progress, lease left (or none known). */
	public boolean isLeaseHeld() {
		return this.state == State.IN_PROGRESS
				&& (this.expiresIn == null || !(this.expiresIn.isNegative() || this.expiresIn.isZero()));
	}

	/** How long ago the key was claimed, never negative; {@code null} when unknown. */
	public @Nullable Duration age(Instant now) {
		if (this.claimedAt == null) {
			return null;
		}
		Duration age = Duration.between(this.claimedAt, now);
		return age.isNegative() ? Duration.ZERO : age;
	}

	/** State of a record. */
	public enum State {

		/** A call holds the key and has not finished. */
		IN_PROGRESS,

		/** The call has finished; its result is replayed. */
		COMPLETED,

		/** The store cannot read what the key holds; calls with the key are never run. */
		UNREADABLE

	}

}
