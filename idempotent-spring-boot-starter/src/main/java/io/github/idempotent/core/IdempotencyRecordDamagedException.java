package io.github.idempotent.core;

/**
 * The record of a key cannot be read: overwritten, truncated, of another type in the
 * store, in a layout or format this version does not know, or with a compressed result
 * that does not inflate. Answered like any result that cannot be returned again
 * ({@code result-unavailable}), and never taken for an absent record: it may be all that
 * is left of a call that ran, so running the method again could repeat its side effects.
 * Deleting the record (the Actuator endpoint {@code idempotency}) lets the key run again.
 */
public class IdempotencyRecordDamagedException extends IdempotencyResultException {

	private final String damage;

	public IdempotencyRecordDamagedException(String message, String damage) {
		super(message);
		this.damage = damage;
	}

	/**
	 * What is wrong with the record, as the store or the format reader found it.
	 */
	public String getDamage() {
		return this.damage;
	}

}
