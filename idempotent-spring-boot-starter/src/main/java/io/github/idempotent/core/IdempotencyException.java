package io.github.idempotent.core;

import java.util.List;
import java.util.Objects;
import java.util.function.Predicate;

import org.jspecify.annotations.Nullable;

/**
 * Base of the exceptions the idempotency protocol throws: the message is for logs, the
 * {@linkplain #getDetail() detail} is what a client may be told. Whether a refusal is
 * worth retrying is {@link #isRetryable()}; a message listener of any broker finds it in
 * a failure's cause chain with {@link #findRetryable} and {@link #findNotRetryable}.
 */
public abstract class IdempotencyException extends RuntimeException {

	/** In the order in which {@link #findNotRetryable} looks for them. */
	private static final List<Class<? extends RuntimeException>> NOT_RETRYABLE = List.of(
			IdempotencyKeyReusedException.class, IdempotencyKeyException.class, IdempotencyPayloadException.class,
			IdempotencyExpressionException.class, IdempotencyResultException.class, IdempotencyScopeException.class);

	private final String detail;

	protected IdempotencyException(String message) {
		this(message, message, null);
	}

	protected IdempotencyException(String message, Throwable cause) {
		this(message, message, cause);
	}

	protected IdempotencyException(String detail, String message, Throwable cause) {
		super(message, cause);
		this.detail = detail;
	}

	/** What went wrong, fit for an API's caller: no class, expression or store names. */
	public String getDetail() {
		return this.detail;
	}

	/**
	 * Whether the same call, made again later with the same key, may succeed: the method
	 * did not run and what stopped it passes by itself (a duplicate in progress, the
	 * store unavailable or full), not a call that must change or has run already.
	 */
	public boolean isRetryable() {
		return false;
	}

	/**
	 * The refusal in the cause chain of {@code failure} that a later delivery may get
	 * past, a store outage before a duplicate in progress: a message listener requeues
	 * the message rather than dead-letter it.
	 * @param failure what a listener threw, or {@code null}
	 * @return the {@linkplain #isRetryable() retryable} refusal, or {@code null} if none
	 */
	public static @Nullable IdempotencyException findRetryable(@Nullable Throwable failure) {
		IdempotencyException outage = find(failure, IdempotencyStoreUnavailableException.class, (ex) -> true);
		return (outage != null) ? outage : find(failure, IdempotencyException.class, IdempotencyException::isRetryable);
	}

	/**
	 * The failure in the cause chain of {@code failure} that no redelivery can fix (key
	 * reused or malformed, payload, expression, result or scope): a message listener
	 * dead-letters the message at once.
	 * @param failure what a listener threw, or {@code null}
	 * @return the first of these types found, in that order, or {@code null} if none
	 */
	public static @Nullable RuntimeException findNotRetryable(@Nullable Throwable failure) {
		return NOT_RETRYABLE.stream()
			.map((type) -> (RuntimeException) find(failure, type, (ex) -> true))
			.filter(Objects::nonNull)
			.findFirst()
			.orElse(null);
	}

	private static <T extends Throwable> @Nullable T find(@Nullable Throwable failure, Class<T> type,
			Predicate<T> test) {
		for (Throwable ex = failure; ex != null; ex = ex.getCause()) {
			if (type.isInstance(ex) && test.test(type.cast(ex))) {
				return type.cast(ex);
			}
		}
		return null;
	}

}
