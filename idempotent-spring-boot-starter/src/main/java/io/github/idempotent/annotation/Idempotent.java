package io.github.idempotent.annotation;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.aot.hint.annotation.Reflective;

/**
 * Makes a method safe to call again with the same idempotency key: the first call claims
 * the key atomically and runs the method, every later call gets the stored result back.
 * Durations are text ({@code "24h"}, {@code "PT30S"}, a placeholder); empty takes the
 * {@code idempotent.*} property of the same name.
 *
 * <pre class="code">
 * &#064;PostMapping("/payments")
 * &#064;Idempotent(key = "#request.orderNo", ttl = "24h")
 * public Payment pay(&#064;RequestBody PaymentRequest request) { ... }
 * </pre>
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Reflective(IdempotentReflectiveProcessor.class)
public @interface Idempotent {

	/**
	 * SpEL expression over the arguments that yields the key ({@code #request.orderNo}).
	 * Empty: the {@code Idempotency-Key} request header.
	 */
	String key() default "";

	/**
	 * Name of the operation, part of the record key. Empty: the bean class's name and the
	 * method's signature.
	 */
	String name() default "";

	/** How long a completed result is replayed. */
	String ttl() default "";

	/**
	 * How long the placeholder of a call in progress lives without renewal (renewed every
	 * third of it): a crashed instance blocks retries for at most this long.
	 */
	String lease() default "";

	/**
	 * How long one call may hold its key, at least the lease; past it the lease is no
	 * longer renewed, and a late result is not stored.
	 */
	String maxDuration() default "";

	/** How long a duplicate waits for the first call before it is refused. */
	String waitFor() default "";

	/** Delay suggested to a duplicate (HTTP {@code Retry-After}). */
	String retryAfter() default "";

	/**
	 * SpEL expression whose value is fingerprinted to detect a key reused with another
	 * payload. Empty: every argument but framework types.
	 */
	String payload() default "";

	/**
	 * SpEL expression that yields the scope the key lives in. Empty: the authenticated
	 * principal with Spring Security, else a global scope.
	 */
	String scope() default "";

	/** Whether a call without a key is rejected; {@code false} runs it unprotected. */
	boolean required() default true;

	/**
	 * Exception types stored like results, so that retries get the same exception. Each
	 * needs a {@code String} or no-argument constructor; subclasses are not stored. Any
	 * other exception releases the key.
	 */
	Class<? extends Throwable>[] cacheFor() default {};

	/**
	 * Statuses of an HTTP handler's response that release the key instead of storing it
	 * ({@code "503"}, {@code "5xx"}, or {@code "none"}). Empty:
	 * {@code idempotent.web.release-on-status} (429 and every 5xx).
	 */
	String[] releaseOnStatus() default {};

	/**
	 * What a call does when its key has completed with the same payload. Only
	 * {@code REPLAY} on an HTTP handler, and no {@code SKIP} for a primitive return type.
	 */
	DuplicateHandling onDuplicate() default DuplicateHandling.REPLAY;

}
