package io.github.idempotent.core;

import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;

import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;

/** One guarded call as the protocol sees it, and how long it waits for a duplicate. */
final class ProtocolCall {

	private static final long FIRST_POLL_MILLIS = 10;

	private static final long MAX_POLL_MILLIS = 200;

	final IdempotencyPolicy policy;

	final String clientKey;

	final RecordKey key;

	final Fingerprint fingerprint;

	final IdempotencyObserver observer;

	/** The call's observation, started by the executor and stopped once it has ended. */
	final CallObservations.@Nullable Call observed;

	final IdempotencyExecutor.@Nullable ResponseCapture capture;

	/** Whether the method returns on the calling thread, where the owner's steps run. */
	final boolean blocking;

	private long deadline;

	private long pollMillis = FIRST_POLL_MILLIS;

	ProtocolCall(IdempotencyPolicy policy, String clientKey, RecordKey key, Fingerprint fingerprint,
			IdempotencyObserver observer, CallObservations.@Nullable Call observed,
			IdempotencyExecutor.@Nullable ResponseCapture capture, boolean blocking) {
		this.policy = policy;
		this.clientKey = clientKey;
		this.key = key;
		this.fingerprint = fingerprint;
		this.observer = observer;
		this.observed = observed;
		this.capture = capture;
		this.blocking = blocking;
	}

	/**
	 * How long to wait before claiming again, or 0 once {@code waitFor} has passed since
	 * the duplicate was first seen. Doubling from {@value #FIRST_POLL_MILLIS} ms to
	 * {@value #MAX_POLL_MILLIS} ms: a short call is seen soon, a long one costs little.
	 */
	long nextPollMillis() {
		long now = System.nanoTime();
		if (this.deadline == 0) {
			this.deadline = now + this.policy.waitFor().toNanos();
		}
		long remainingMillis = TimeUnit.NANOSECONDS.toMillis(this.deadline - now);
		if (remainingMillis <= 0) {
			return 0;
		}
		long delay = Math.min(this.pollMillis, remainingMillis);
		this.pollMillis = Math.min(this.pollMillis * 2, MAX_POLL_MILLIS);
		return delay;
	}

}
