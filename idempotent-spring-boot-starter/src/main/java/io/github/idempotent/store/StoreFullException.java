package io.github.idempotent.store;

/**
 * A store has no room for a new key and refuses to claim it, rather than evict a record
 * whose key a retry would then run again for. Thrown by {@link IdempotencyStore#claim} of
 * a store that bounds what it holds; a store whose server answers such a refusal of its
 * own (Redis's {@code OOM} under {@code maxmemory-policy noeviction}) is recognised
 * without it.
 * <p>
 * A full store is not an outage: the executor never runs a call unprotected for it,
 * whatever {@code idempotent.failure-mode} says, and refuses the call as
 * {@link io.github.idempotent.core.IdempotencyStoreFullException}: an attacker who fills
 * the store must not turn the protection off for everyone else.
 */
public class StoreFullException extends RuntimeException {

	public StoreFullException(String message) {
		super(message);
	}

}
