package io.github.idempotent.core;

import org.jspecify.annotations.Nullable;

/**
 * Observes guarded calls one at a time, from the claim to the stored outcome: a
 * Micrometer {@code Observation} (a timer, and a span when tracing is on) per call when
 * Micrometer is present. The interceptor and {@link IdempotencyTemplate} know only this
 * interface, so they load no class of the observing library; without an implementation
 * they allocate nothing for it.
 */
public interface IdempotentCallObservations {

	/**
	 * Starts observing one call.
	 * @param policy the operation's settings
	 * @param clientKey the key as the caller sent it
	 * @param parent the caller's observation when it does not come from the calling
	 * thread (a {@code Mono}'s subscriber context), else {@code null}
	 * @return the started observation, or {@code null} to leave this call unobserved
	 */
	@Nullable ObservedCall start(IdempotencyPolicy policy, String clientKey, @Nullable Object parent);

	/**
	 * One observed call: told the call's outcome and steps as an observer, then stopped
	 * once.
	 */
	interface ObservedCall extends IdempotencyObserver {

		/**
		 * Makes the call the current observation of this thread until the scope closes,
		 * so that what the method observes (its queries, its HTTP calls) nests inside.
		 */
		Scope openScope();

		/**
		 * What a Reactor context carries for this call under
		 * {@link #REACTOR_CONTEXT_KEY}, so that the observations of a {@code Mono} method
		 * nest inside.
		 */
		Object contextValue();

		/**
		 * Ends the observation; calls after the first do nothing.
		 * @param failure what the call threw, or {@code null} when it returned
		 */
		void stop(@Nullable Throwable failure);

	}

	/**
	 * A thread's current observation, until closed.
	 */
	interface Scope extends AutoCloseable {

		@Override
		void close();

	}

	/**
	 * Key of the current observation in a Reactor context: Micrometer's
	 * {@code ObservationThreadLocalAccessor.KEY}, written out so that this interface
	 * loads no Micrometer class.
	 */
	String REACTOR_CONTEXT_KEY = "micrometer.observation";

}
