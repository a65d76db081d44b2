package io.github.idempotent.core;

import java.lang.reflect.Method;
import java.util.concurrent.Callable;

import org.jspecify.annotations.Nullable;

import org.springframework.aop.support.AopUtils;

import io.github.idempotent.core.IdempotencyExecutor.ResponseCapture;
import io.github.idempotent.store.Fingerprint;

/**
 * What the web layer hands the call of a handler whose key or scope comes from its
 * arguments: Spring MVC on the dispatching thread for one dispatch, WebFlux in the
 * handler {@code Mono}'s Reactor context. A handler called without one fails.
 *
 * @param scope the caller's scope, or {@code null} when an expression names it
 * @param capture where the executor answers a call whose response is recorded, or
 * {@code null} when its return value is stored
 */
record HandlerCall(Method method, @Nullable String headerKey, @Nullable String scope, Fingerprint fingerprint,
		@Nullable ResponseCapture capture) {

	static final String CONTEXT_KEY = HandlerCall.class.getName();

	private static final ThreadLocal<@Nullable HandlerCall> dispatching = new ThreadLocal<>();

	/** Runs the dispatch of a request to its handler, with {@code call} handed to it. */
	static <T> T dispatch(HandlerCall call, Callable<T> dispatch) throws Exception {
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

	// Taken once: only the first call of the handler method is the request's.
	static @Nullable HandlerCall take(Method method, @Nullable Class<?> targetClass) {
		HandlerCall call = dispatching.get();
		if (call == null || !call.handles(method, targetClass)) {
			return null;
		}
		dispatching.remove();
		return call;
	}

	boolean handles(Method method, @Nullable Class<?> targetClass) {
		return method.equals(this.method) || AopUtils.getMostSpecificMethod(method, targetClass).equals(this.method);
	}

}
