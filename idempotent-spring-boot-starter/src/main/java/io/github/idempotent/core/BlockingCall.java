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

	private boolean answered;

	private @Nullable Object answer;

	// Null once the outcome is reported; the owner's hold only if this call owns the key.
	private IdempotencyContext.@Nullable Scope context;

	private @Nullable OwnerHandle owner;

	private @Nullable Throwable failure;

	private BlockingCall(CallObservations.@Nullable Call observed) {
		this.observed = observed;
		this.observing = (observed != null) ? observed.observation.openScope() : null;
	}

	static BlockingCall admit(IdempotencyProtocol protocol, ProtocolCall call) throws Throwable {
		BlockingCall admitted = new BlockingCall(call.observed);
		try {
			admitted.claim(protocol, call);
		}
		catch (Throwable ex) {
			admitted.failure = ex;
			admitted.close();
			throw ex;
		}
		return admitted;
	}

	private void claim(IdempotencyProtocol protocol, ProtocolCall call) throws Throwable {
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
			this.context = IdempotencyContext.unbind();
			return;
		}
		while (true) {
			ClaimDecision decision = protocol.decide(call, claim);
			if (decision instanceof ClaimDecision.Run run) {
				try {
					this.context = protocol.bindOwner(call, run.acquired());
				}
				catch (Throwable ex) {
					OwnerHandle.await(run.owner().releaseAsync(ex));
					throw ex;
				}
				this.owner = run.owner();
				return;
			}
			if (decision instanceof ClaimDecision.Answer answer) {
				this.answered = true;
				this.answer = answer.value();
				return;
			}
			if (decision instanceof ClaimDecision.RunAsDuplicate duplicate) {
				this.context = IdempotencyContext.bind(duplicate.context());
				return;
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
				// Left without an outcome: the key must not wait for its lease.
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
