package io.github.idempotent.store;

/**
 * A store has no room for a new key and refuses to claim it, rather than evict a record.
 * A full store is not an outage: the call is refused whatever
 * {@code idempotent.failure-mode} says, so that filling the store cannot turn the
 * protection off.
 */
public class StoreFullException extends RuntimeException {

	public StoreFullException(String message) {
		super(message);
	}

}
