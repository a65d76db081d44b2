package io.github.idempotent.annotation;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.aot.hint.annotation.Reflective;

/**
 * Makes a method safe to call again with the same idempotency key: the first call claims
 * the key atomically and runs the method, every later call with the same key gets the
 * stored result back without running it.
 * <p>
 * Durations ({@link #ttl()}, {@link #lease()}, {@link #maxDuration()},
 * {@link #waitFor()}, {@link #retryAfter()}) are text: {@code "24h"}, {@code "PT30S"},
 * {@code "500ms"} or a placeholder such as {@code "${payments.ttl}"}. An empty value
 * takes the {@code idempotent.*} property of the same name.
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
	 * SpEL expression over the method arguments that yields the idempotency key, by
	 * parameter name ({@code #request.orderNo}) or position ({@code #p0}, {@code #a0}).
	 * Empty: the key is the value of the {@code Idempotency-Key} request header.
	 */
	String key() default "";

	/**
	 * Name of the operation, part of the record key so that two operations never share
	 * records. Empty: the bean class's fully qualified name and the method's signature
	 * ({@code com.shop.PaymentController#pay(com.shop.PaymentRequest)}).
	 */
	String name() default "";

	/**
	 * How long a completed result is replayed. Empty: {@code idempotent.ttl}.
	 */
	String ttl() default "";

	/**
	 * How long the placeholder (the record of a call in progress) lives without renewal;
	 * a crashed instance blocks retries for at most this long. Renewed every third of it
	 * while the method runs. Empty: {@code idempotent.lease}.
	 */
	String lease() default "";

	/**
	 * How long one call may hold its key, at least the lease. Past it the lease is no
	 * longer renewed, so the key is free once the lease runs out and a retry runs the
	 * method again; the call's own result, when it comes, goes to its caller but is not
	 * stored. Bounds a method that hangs, or a future or {@code Mono} that never
	 * completes. Empty: {@code idempotent.max-duration}.
	 */
	String maxDuration() default "";

	/**
	 * How long a duplicate waits for the first call to finish before it is told the
	 * operation is in progress. Empty: {@code idempotent.wait-for}.
	 */
	String waitFor() default "";

	/**
	 * Delay suggested to a duplicate that arrives while the first call runs (the HTTP
	 * {@code Retry-After}). Empty: {@code idempotent.retry-after}.
	 */
	String retryAfter() default "";

	/**
	 * SpEL expression over the arguments whose value is fingerprinted to detect the same
	 * key reused with a different payload. Empty: every argument except framework types
	 * (servlet request and response, principal, binding result, model).
	 */
	String payload() default "";

	/**
	 * SpEL expression over the arguments that yields the scope the key lives in, so that
	 * two callers never share results (a tenant id, say). Empty: the authenticated
	 * principal when Spring Security is present, else a global scope.
	 */
	String scope() default "";

	/**
	 * Whether a call without a key is rejected. When {@code false}, such a call runs
	 * unprotected, which lets an endpoint adopt idempotency keys gradually.
	 */
	boolean required() default true;

	/**
	 * Exception types that are outcomes rather than failures: when the method throws one
	 * of them, the error is stored like a result and retries get the same exception
	 * instead of running the method again. The type needs a constructor taking a
	 * {@code String} message, or a no-argument one. Only the listed classes themselves
	 * are stored, not their subclasses (a replay recreates the exception by the class
	 * name in the record, so a record must not name a class of its choosing). Any other
	 * exception releases the key.
	 */
	Class<? extends Throwable>[] cacheFor() default {};

	/**
	 * Statuses of an HTTP handler's response that are not final: a response with one of
	 * them releases the key, as a thrown exception does, and nothing is stored, so that a
	 * retry with the same key runs the method again (and may send another body). Error
	 * statuses ({@code "503"}) or classes ({@code "4xx"}, {@code "5xx"}), or
	 * {@code "none"} to store every response; a value may be a placeholder and hold a
	 * comma-separated list. Empty: {@code idempotent.web.release-on-status} (429 and
	 * every 5xx). Only on an HTTP handler method: elsewhere it fails at start-up.
	 */
	String[] releaseOnStatus() default {};

	/**
	 * What a call does when its key has completed with the same payload:
	 * {@link DuplicateHandling#REPLAY replay} the stored outcome (the default),
	 * {@link DuplicateHandling#SKIP skip} the method and return {@code null} (a message
	 * listener acknowledges the duplicate), or run the method
	 * {@link DuplicateHandling#FLAG flagged} as a duplicate
	 * ({@code IdempotencyContext.current().get().isDuplicate()}), storing nothing. A
	 * payload that differs from the first is refused as a reused key in every mode. Only
	 * {@code REPLAY} is allowed on an HTTP handler method, and {@code SKIP} not on a
	 * method that returns a primitive: both fail at start-up.
	 */
	DuplicateHandling onDuplicate() default DuplicateHandling.REPLAY;

}
