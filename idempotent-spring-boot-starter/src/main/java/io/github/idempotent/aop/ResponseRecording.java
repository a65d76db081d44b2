package io.github.idempotent.aop;

import java.lang.reflect.Method;

import org.jspecify.annotations.Nullable;

import io.github.idempotent.core.OutcomeRecorder;

/**
 * Where a call that is the handler of the current web request gets the recorder that
 * stores its response as written (see {@link OutcomeRecorder}). Spring MVC's
 * implementation reads the request bound to the calling thread; WebFlux's is
 * {@link ReactiveIdempotencyContext#recorder}.
 */
@FunctionalInterface
public interface ResponseRecording {

	/**
	 * The recorder for a call of {@code method} on a bean of {@code targetClass}, or
	 * {@code null} when that is not the handler of a request whose response is recorded.
	 */
	@Nullable OutcomeRecorder recorderFor(Method method, @Nullable Class<?> targetClass);

}
