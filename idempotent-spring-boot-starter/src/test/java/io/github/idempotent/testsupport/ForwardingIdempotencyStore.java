package io.github.idempotent.testsupport;

import java.time.Duration;

import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.StoredResult;

/**
 * A store that hands every call to another one: a test overrides the calls it wants to
 * count, slow down or fail.
 */
public class ForwardingIdempotencyStore implements IdempotencyStore {

	private final IdempotencyStore delegate;

	public ForwardingIdempotencyStore(IdempotencyStore delegate) {
		this.delegate = delegate;
	}

	@Override
	public ClaimResult claim(RecordKey key, Fingerprint fingerprint, Duration lease) {
		return this.delegate.claim(key, fingerprint, lease);
	}

	@Override
	public boolean complete(RecordKey key, String token, Fingerprint fingerprint, StoredResult result, Duration ttl) {
		return this.delegate.complete(key, token, fingerprint, result, ttl);
	}

	@Override
	public boolean release(RecordKey key, String token) {
		return this.delegate.release(key, token);
	}

	@Override
	public boolean renew(RecordKey key, String token, Fingerprint fingerprint, Duration lease) {
		return this.delegate.renew(key, token, fingerprint, lease);
	}

	@Override
	public int maxKeyLength() {
		return this.delegate.maxKeyLength();
	}

}
