package io.github.idempotent.aop;

import java.lang.reflect.Method;
import java.util.concurrent.Callable;

import org.jspecify.annotations.Nullable;

import org.springframework.aop.support.AopUtils;

import io.github.idempotent.core.IdempotencyObserver;
import io.github.idempotent.core.OutcomeRecorder;
import io.github.idempotent.store.Fingerprint;

/**
 * What the web layer hands to the call of a request's own handler method whose key (or
 * scope) comes from its arguments: the caller's scope, the request's fingerprint, the
 * recorder of its response and the observer that marks it, all taken from the request in
 * hand. Spring MVC hands it over on the thread that dispatches the request, for that one
 * dispatch only, as a transaction is bound by the call that started it; WebFlux puts it
 * in the Reactor context of the handler's {@code Mono}, where only that subscriber sees
 * it. A handler method called without one was called outside its request: the call fails.
 *
 * @param method the handler method of the request
 * @param headerKey the key the request's header carries, or {@code null}
 * @param scope the caller's scope, or {@code null} for an operation whose expression
 * names it
 * @param fingerprint the fingerprint of the request as received
 * @param recorder stores and replays the response as written
 * @param observer marks the response (the key echoed, a replay flagged)
 */
public record HandlerCall(Method method, @Nullable String headerKey, @Nullable String scope, Fingerprint fingerprint,
		OutcomeRecorder recorder, IdempotencyObserver observer) {

	/**
	 * Key of a {@code HandlerCall} in a Reactor context.
	 */
	public static final String CONTEXT_KEY = HandlerCall.class.getName();

	private static final ThreadLocal<@Nullable HandlerCall> dispatching = new ThreadLocal<>();

	/**
	 * Runs {@code dispatch}, the dispatch of a request to its handler on this thread,
	 * with {@code call} handed to the handler method's call.
	 */
	public static <T> T dispatch(HandlerCall call, Callable<T> dispatch) throws Exception {
		HandlerCall previous = dispatching.get();
		dispatching.set(call);
		try {
			return dispatch.call();
		}
		finally {
			if (previous != null) {
				dispatching.set(previous);
			}
			else {
				dispatching.remove();
			}
		}
	}

	/**
	 * The call handed to a call of {@code method} on this thread, taken once: the first
	 * call of the request's handler method is the request's; any other finds none.
	 */
	static @Nullable HandlerCall take(Method method, @Nullable Class<?> targetClass) {
		HandlerCall call = dispatching.get();
		if (call == null || !call.handles(method, targetClass)) {
			return null;
		}
		dispatching.remove();
		return call;
	}

	/**
	 * Whether a call of {@code method} on a bean of {@code targetClass} is a call of this
	 * handler method.
	 */
	boolean handles(Method method, @Nullable Class<?> targetClass) {
		return method.equals(this.method) || AopUtils.getMostSpecificMethod(method, targetClass).equals(this.method);
	}

}
