package io.github.idempotent.core;

import org.jspecify.annotations.Nullable;

import io.github.idempotent.store.ClaimResult;

/**
 * The protocol for a method that returns on the calling thread: claims and runs there,
 * sleeping between claims while a duplicate is in progress.
 */
final class BlockingCall {

	private BlockingCall() {
	}

	static @Nullable Object execute(IdempotencyProtocol protocol, ProtocolCall call,
			IdempotencyExecutor.Invocation invocation) throws Throwable {
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
			try (IdempotencyContext.Scope scope = IdempotencyContext.unbind()) {
				return invocation.proceed();
			}
		}
		while (true) {
			ClaimDecision decision = protocol.decide(call, claim);
			if (decision instanceof ClaimDecision.Run run) {
				return runAsOwner(protocol, call, run, invocation);
			}
			if (decision instanceof ClaimDecision.Answer answer) {
				return answer.value();
			}
			if (decision instanceof ClaimDecision.RunAsDuplicate duplicate) {
				try (IdempotencyContext.Scope scope = IdempotencyContext.bind(duplicate.context())) {
					return invocation.proceed();
				}
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

	private static @Nullable Object runAsOwner(IdempotencyProtocol protocol, ProtocolCall call, ClaimDecision.Run run,
			IdempotencyExecutor.Invocation invocation) throws Throwable {
		Object result;
		try (IdempotencyContext.Scope scope = protocol.bindOwner(call, run.acquired())) {
			result = invocation.proceed();
		}
		catch (Throwable ex) {
			run.owner().release(ex);
			throw ex;
		}
		run.owner().complete(result);
		return result;
	}

}
