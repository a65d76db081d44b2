package io.github.idempotent.core;

import io.micrometer.observation.Observation;
import org.jspecify.annotations.Nullable;

import io.github.idempotent.store.ClaimResult;

/**
 * The protocol for a method that returns on the calling thread: claims there, sleeping
 * between claims while a duplicate is in progress, then holds what the method runs under
 * (the owner's hold, its context, the observation's scope) until the caller reports how
 * the method ended and closes the call.
 */
final class BlockingCall implements IdempotencyExecutor.Admission {

	private final CallObservations.@Nullable Call observed;

	private final Observation.@Nullable Scope observing;

	private final boolean answered;

	private final @Nullable Object answer;

	// Null once the outcome is reported; the owner's hold only if this call owns the key.
	private IdempotencyContext.@Nullable Scope context;

	private @Nullable OwnerHandle owner;

	private @Nullable Throwable failure;

	private BlockingCall(CallObservations.@Nullable Call observed, Observation.@Nullable Scope observing,
			@Nullable Object answer, IdempotencyContext.@Nullable Scope context, @Nullable OwnerHandle owner) {
		this.observed = observed;
		this.observing = observing;
		this.answered = context == null;
		this.answer = answer;
		this.context = context;
		this.owner = owner;
	}

	static BlockingCall admit(IdempotencyProtocol protocol, ProtocolCall call, CallObservations.@Nullable Call observed)
			throws Throwable {
		Observation.Scope observing = (observed != null) ? observed.observation.openScope() : null;
		try {
			return claim(protocol, call, observed, observing);
		}
		catch (Throwable ex) {
			if (observing != null) {
				observing.close();
			}
			CallObservations.stop(observed, ex);
			throw ex;
		}
	}

	private static BlockingCall claim(IdempotencyProtocol protocol, ProtocolCall call,
			CallObservations.@Nullable Call observed, Observation.@Nullable Scope observing) throws Throwable {
		ClaimResult claim;
		try {
			claim = protocol.store.claim(call);
		}
		catch (RuntimeException ex) {
			Throwable refusal = protocol.firstClaimFailed(call, ex);
			if (refusal != null) {
				throw refusal;
			}
			// No context: an enclosing call's must not tell this unprotected one that it
			// is a first attempt.
			return new BlockingCall(observed, observing, null, IdempotencyContext.unbind(), null);
		}
		while (true) {
			ClaimDecision decision = protocol.decide(call, claim);
			if (decision instanceof ClaimDecision.Run run) {
				IdempotencyContext.Scope context;
				try {
					context = protocol.bindOwner(call, run.acquired());
				}
				catch (Throwable ex) {
					OwnerHandle.await(run.owner().releaseAsync(ex));
					throw ex;
				}
				return new BlockingCall(observed, observing, null, context, run.owner());
			}
			if (decision instanceof ClaimDecision.Answer answer) {
				return new BlockingCall(observed, observing, answer.value(), null, null);
			}
			if (decision instanceof ClaimDecision.RunAsDuplicate duplicate) {
				return new BlockingCall(observed, observing, null, IdempotencyContext.bind(duplicate.context()), null);
			}
			if (!IdempotencyThreads.sleep(((ClaimDecision.Wait) decision).millis())) {
				throw protocol.inProgress(call);
			}
			if (protocol.threads.stopping) {
				throw protocol.shuttingDown(call);
			}
			try {
				// Claim, not just read: if the first call failed and released the key,
				// this caller becomes the owner and runs the method itself.
				claim = protocol.store.claim(call);
			}
			catch (RuntimeException ex) {
				throw protocol.claimFailed(call, ex);
			}
		}
	}

	@Override
	public boolean isAnswered() {
		return this.answered;
	}

	@Override
	public @Nullable Object answer() {
		return this.answer;
	}

	@Override
	public void returned(@Nullable Object result) {
		OwnerHandle owner = unbind();
		if (owner != null) {
			try {
				OwnerHandle.await(owner.completeAsync(result));
			}
			catch (Throwable ex) {
				// The call fails with it (an observer's Error): so does its observation.
				this.failure = ex;
				throw ex;
			}
		}
	}

	@Override
	public void failed(Throwable failure) {
		this.failure = failure;
		OwnerHandle owner = unbind();
		if (owner != null) {
			OwnerHandle.await(owner.releaseAsync(failure));
		}
	}

	// The method's context ends before its outcome is stored.
	private @Nullable OwnerHandle unbind() {
		if (this.context == null) {
			throw new IllegalStateException("No outcome to report: the call was answered or has reported one");
		}
		this.context.close();
		this.context = null;
		OwnerHandle owner = this.owner;
		this.owner = null;
		return owner;
	}

	@Override
	public void close() {
		try {
			if (this.context != null) {
				// The caller left without an outcome: the key must not wait for its
				// lease.
				failed(new IllegalStateException("The call was closed before its method's outcome was reported"));
			}
		}
		finally {
			if (this.observing != null) {
				this.observing.close();
			}
			CallObservations.stop(this.observed, this.failure);
		}
	}

}
