package io.github.idempotent.test;

import java.util.concurrent.atomic.AtomicInteger;

import io.github.idempotent.core.IdempotencyException;
import io.github.idempotent.core.IdempotencyObserver;
import io.github.idempotent.core.IdempotencyPolicy;

/**
 * Counts what the protocol did, as the starter saw it: how many calls ran the method, how
 * many were replayed and how many were refused. The counts are of every
 * {@code @Idempotent} call in the application context, so a test reads the difference
 * across what it sent; {@link IdempotencyTester} does.
 */
public class RecordingIdempotencyObserver implements IdempotencyObserver {

	private final AtomicInteger executions = new AtomicInteger();

	private final AtomicInteger replays = new AtomicInteger();

	private final AtomicInteger rejections = new AtomicInteger();

	/**
	 * Calls that ran the method: first calls, duplicates that {@code FLAG} ran again, and
	 * calls that ran unprotected while the store was down.
	 */
	public int executions() {
		return this.executions.get();
	}

	/**
	 * Duplicates answered with the stored result, without running the method.
	 */
	public int replays() {
		return this.replays.get();
	}

	/**
	 * Duplicates refused: in progress, or the key reused with another payload.
	 */
	public int rejections() {
		return this.rejections.get();
	}

	@Override
	public void executed(IdempotencyPolicy policy, String key) {
		this.executions.incrementAndGet();
	}

	@Override
	public void flagged(IdempotencyPolicy policy, String key) {
		this.executions.incrementAndGet();
	}

	@Override
	public void bypassed(IdempotencyPolicy policy, String key, RuntimeException storeFailure) {
		this.executions.incrementAndGet();
	}

	@Override
	public void replayed(IdempotencyPolicy policy, String key) {
		this.replays.incrementAndGet();
	}

	@Override
	public void rejected(IdempotencyPolicy policy, String key, IdempotencyException reason) {
		this.rejections.incrementAndGet();
	}

}
