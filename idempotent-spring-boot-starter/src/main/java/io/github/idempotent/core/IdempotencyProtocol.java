package io.github.idempotent.core;

import java.time.Duration;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.StoredResult;

/**
 * The protocol for every kind of call: what the answer to a claim means (run as owner,
 * answer a completed duplicate, wait for one in progress, refuse), what a store failure
 * means, and how the owner's hold starts. {@link BlockingCall} and
 * {@link CompletionStageCall} carry its decisions out; it logs as the executor.
 */
final class IdempotencyProtocol {

	private static final Log logger = LogFactory.getLog(IdempotencyExecutor.class);

	private final StoreOutageLog outageLog = new StoreOutageLog(logger, Duration.ofSeconds(10),
			"Idempotency store unavailable", "None of them ran (idempotent.failure-mode=closed): HTTP callers get "
					+ "503, listeners get their message again until the store is back");

	// A full store refuses every new key until records expire.
	private final StoreOutageLog fullLog = new StoreOutageLog(logger, Duration.ofMinutes(1), "Idempotency store full",
			"None of them ran, in every failure mode (HTTP callers get 503, listeners "
					+ "their message again later). Give the store more room, shorten the ttl, or limit what one "
					+ "client may store");

	final StoreAccess store;

	final IdempotencyThreads threads;

	private final FailureMode failureMode;

	final long maxResultSize;

	final LeaseWatchdog leases;

	volatile ResultCompression resultCompression = ResultCompression.none();

	IdempotencyProtocol(IdempotencyStore store, IdempotencyThreads threads, FailureMode failureMode,
			long maxResultSize) {
		this.store = new StoreAccess(store, threads);
		this.threads = threads;
		this.failureMode = failureMode;
		this.maxResultSize = maxResultSize;
		this.leases = new LeaseWatchdog(store, threads.timer, threads.renewals);
	}

	/**
	 * What {@code call} does with {@code claim}: an owner's lease is watched from here
	 * on; a refusal is thrown; a replay is decoded.
	 */
	ClaimDecision decide(ProtocolCall call, ClaimResult claim) throws Throwable {
		call.observer.step(call.policy, call.clientKey, IdempotencyObserver.Step.CLAIMED);
		if (claim instanceof ClaimResult.Acquired acquired) {
			return new ClaimDecision.Run(new OwnerHandle(this, this.leases.watch(call, acquired.token())), acquired);
		}
		if (claim instanceof ClaimResult.Completed completed) {
			return answerDuplicate(call, completed);
		}
		if (claim instanceof ClaimResult.Damaged damaged) {
			throw damaged.laterFormat() ? tooNew(call, damaged.damage()) : damaged(call, damaged.damage());
		}
		ClaimResult.InProgress inProgress = (ClaimResult.InProgress) claim;
		checkFingerprint(call, inProgress.fingerprint());
		long delay = call.nextPollMillis();
		if (delay <= 0) {
			throw inProgress(call);
		}
		return new ClaimDecision.Wait(delay);
	}

	IdempotencyException inProgress(ProtocolCall call) {
		return reject(call,
				new IdempotencyInProgressException(call.clientKey, call.policy.name(), call.policy.retryAfter()));
	}

	/**
	 * The failure to give the caller of a failed first claim, or {@code null} to run the
	 * method unprotected (store unreachable, {@code failure-mode=open}, not full).
	 */
	@Nullable Throwable firstClaimFailed(ProtocolCall call, Throwable failure) {
		if (this.failureMode == FailureMode.CLOSED || !StoreFailureClassifier.isUnavailable(failure)
				|| StoreFailureClassifier.isFull(failure)) {
			return refusal(call, failure);
		}
		logger.warn("Idempotency store unavailable, running " + call.policy.name() + " for key '" + call.clientKey
				+ "' unprotected (idempotent.failure-mode=open): " + failure);
		call.observer.bypassed(call.policy, call.clientKey, asRuntime(failure));
		return null;
	}

	/** The failure of a re-claim, never run unprotected: the first may be running. */
	Throwable claimFailed(ProtocolCall call, Throwable failure) {
		if (this.threads.stopping) {
			// The store's client may be closing with the application, failing the
			// re-claim in its own words: retry later, like every other waiting call.
			IdempotencyStoreUnavailableException stopping = shuttingDown(call);
			stopping.addSuppressed(failure);
			return stopping;
		}
		return refusal(call, failure);
	}

	/** Only an unreachable store is "unavailable" (503); others go as they are. */
	private Throwable refusal(ProtocolCall call, Throwable failure) {
		if (StoreFailureClassifier.isFull(failure)) {
			this.fullLog.refused(call.policy, call.clientKey, failure);
			return reject(call,
					new IdempotencyStoreFullException(call.policy.name(), call.policy.retryAfter(), failure));
		}
		if (!StoreFailureClassifier.isUnavailable(failure)) {
			return failure;
		}
		this.outageLog.refused(call.policy, call.clientKey, asRuntime(failure));
		return new IdempotencyStoreUnavailableException(call.policy.name(), call.policy.retryAfter(), failure);
	}

	/** For a call that would wait again at shutdown: retry later, as for an outage. */
	IdempotencyStoreUnavailableException shuttingDown(ProtocolCall call) {
		return new IdempotencyStoreUnavailableException(call.policy.name(), call.policy.retryAfter(),
				new IllegalStateException("the application is shutting down"));
	}

	private static RuntimeException asRuntime(Throwable failure) {
		return (failure instanceof RuntimeException runtime) ? runtime : new IllegalStateException(failure);
	}

	/**
	 * Binds the owner's context, first warning when the key's previous call never
	 * finished: its side effects may be repeated
	 * ({@link IdempotencyContext#isTakeover()}).
	 */
	IdempotencyContext.Scope bindOwner(ProtocolCall call, ClaimResult.Acquired acquired) {
		if (acquired.isTakeover()) {
			logger.warn("Key '" + call.clientKey + "' of " + call.policy.name() + " is taken over by attempt "
					+ acquired.attempt() + ": the previous call"
					+ ((acquired.previousAttemptStartedAt() != null)
							? " (started " + acquired.previousAttemptStartedAt() + ")" : "")
					+ " never finished (its instance stopped, hung past its lease, or an operator forced the key "
					+ "free), so its side effects may have happened; the method runs again and can tell from "
					+ "IdempotencyContext");
		}
		return IdempotencyContext.bind(IdempotencyContext.owner(call.policy.name(), call.clientKey, acquired.attempt(),
				acquired.previousAttemptStartedAt()));
	}

	/**
	 * The answer to a duplicate of a completed call: the stored outcome ({@code REPLAY}),
	 * {@code null} without reading it ({@code SKIP}), or a run with a duplicate's context
	 * ({@code FLAG}) that stores and releases nothing. Another payload is always refused.
	 */
	private ClaimDecision answerDuplicate(ProtocolCall call, ClaimResult.Completed completed) throws Throwable {
		checkFingerprint(call, completed.fingerprint());
		switch (call.policy.duplicates()) {
			case SKIP -> {
				call.observer.skipped(call.policy, call.clientKey);
				return new ClaimDecision.Answer(null);
			}
			case FLAG -> {
				call.observer.flagged(call.policy, call.clientKey);
				return new ClaimDecision.RunAsDuplicate(
						IdempotencyContext.duplicate(call.policy.name(), call.clientKey));
			}
			default -> {
				// Told before the stored outcome is read: an observer hears of the replay
				// even when it cannot be returned (result-unavailable).
				call.observer.replayed(call.policy, call.clientKey);
				return new ClaimDecision.Answer(replay(call, completed.result()));
			}
		}
	}

	private @Nullable Object replay(ProtocolCall call, StoredResult result) throws Throwable {
		IdempotencyPolicy policy = call.policy;
		try {
			RecordedResponse recorded = StoredOutcome.recordedResponse(result, this.maxResultSize);
			if (recorded == null) {
				Object value;
				try {
					value = StoredOutcome.replay(policy, call.clientKey, result, this.maxResultSize);
				}
				catch (IdempotencyResultException | StoredOutcome.DamagedOutcomeException ex) {
					throw ex;
				}
				catch (Throwable stored) {
					// A cacheFor exception: its error response is marked as a replay.
					if (call.capture != null) {
						call.capture.replayedFailure = true;
					}
					throw stored;
				}
				if (call.capture != null) {
					throw new IdempotencyResultException("The result of " + policy.name() + " for key '"
							+ call.clientKey + "' was stored as a return value, not as the HTTP response its first "
							+ "caller was sent; it is not replayed to an HTTP request");
				}
				return value;
			}
			if (call.capture == null) {
				throw new IdempotencyResultException("The result of " + policy.name() + " for key '" + call.clientKey
						+ "' was stored as the HTTP response its first caller was sent; it is replayed only to an "
						+ "HTTP request handled by the same method, not to this call");
			}
			call.capture.replay = new IdempotencyExecutor.ResponseCapture.Replay(policy.name(), call.clientKey,
					recorded);
			return null;
		}
		catch (StoredOutcome.LaterFormatException ex) {
			throw tooNew(call, ex.getMessage());
		}
		catch (StoredOutcome.DamagedOutcomeException ex) {
			throw damaged(call, ex.getMessage());
		}
	}

	/**
	 * A record a newer version wrote: "retry later", which in a rolling upgrade reaches
	 * an instance of that version. Logged here, where the record key is known.
	 */
	private static IdempotencyRecordTooNewException tooNew(ProtocolCall call, String damage) {
		String message = warnRecord(call, "was written by a newer version of the starter (" + damage
				+ "): answered retry later, so that the retry reaches an instance of that version; the method is "
				+ "not run");
		return new IdempotencyRecordTooNewException(message, call.policy.retryAfter());
	}

	/** A record that cannot be read: warned without a stack trace, the damage named. */
	private static IdempotencyRecordDamagedException damaged(ProtocolCall call, String damage) {
		String message = warnRecord(call,
				"cannot be read: " + damage + ". Answered that the result is unavailable; the method is not run "
						+ "again for this key. Delete the record (actuator endpoint idempotency) to let the key run");
		return new IdempotencyRecordDamagedException(message, damage);
	}

	private static String warnRecord(ProtocolCall call, String what) {
		String message = "Idempotency record " + call.key.value() + " of " + call.policy.name() + " for key '"
				+ call.clientKey + "' " + what;
		logger.warn(message);
		return message;
	}

	private static void checkFingerprint(ProtocolCall call, Fingerprint actual) {
		if (!call.fingerprint.equals(actual)) {
			throw reject(call, new IdempotencyKeyReusedException(call.clientKey, call.policy.name()));
		}
	}

	private static <E extends IdempotencyException> E reject(ProtocolCall call, E ex) {
		call.observer.rejected(call.policy, call.clientKey, ex);
		return ex;
	}

}
