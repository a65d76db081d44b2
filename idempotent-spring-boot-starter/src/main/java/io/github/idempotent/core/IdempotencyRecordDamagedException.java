package io.github.idempotent.core;

/**
 * The record of a key cannot be read. Never taken for an absent record, as it may be all
 * that is left of a call that ran; deleting it (Actuator endpoint {@code idempotency})
 * lets the key run again.
 */
public class IdempotencyRecordDamagedException extends IdempotencyResultException {

	private final String damage;

	public IdempotencyRecordDamagedException(String message, String damage) {
		super(message);
		this.damage = damage;
	}

	/** What is wrong with the record. */
	public String getDamage() {
		return this.damage;
	}

}
