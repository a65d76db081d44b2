package io.github.idempotent.web;

import java.net.URI;
import java.time.Duration;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

import io.github.idempotent.core.IdempotencyException;
import io.github.idempotent.core.IdempotencyInProgressException;
import io.github.idempotent.core.IdempotencyKeyException;
import io.github.idempotent.core.IdempotencyKeyReusedException;
import io.github.idempotent.core.IdempotencyRecordDamagedException;
import io.github.idempotent.core.IdempotencyRequestTooLargeException;
import io.github.idempotent.core.IdempotencyScopeException;
import io.github.idempotent.core.IdempotencyResultException;
import io.github.idempotent.core.IdempotencyStoreFullException;
import io.github.idempotent.core.IdempotencyStoreUnavailableException;

/**
 * Maps the starter's exceptions to RFC 9457 problems (docs/http.md, "Problems"), with
 * their {@linkplain IdempotencyException#getDetail() details}, never their messages.
 * Ordered ahead of advice of the default order, since Spring picks the first advice with
 * any matching handler and a catch-all would answer 500.
 */
@RestControllerAdvice
@Order(IdempotencyProblemHandler.ORDER)
public class IdempotencyProblemHandler {

	// Room above it for an application's own.
	public static final int ORDER = Ordered.HIGHEST_PRECEDENCE + 1000;

	private static final Log logger = LogFactory.getLog(IdempotencyProblemHandler.class);

	@ExceptionHandler
	public ResponseEntity<ProblemDetail> inProgress(IdempotencyInProgressException ex) {
		return respond(HttpStatus.CONFLICT, "in-progress", "Request in progress", ex.getDetail(), ex.getKey(),
				ex.getRetryAfter());
	}

	@ExceptionHandler
	public ResponseEntity<ProblemDetail> keyReused(IdempotencyKeyReusedException ex) {
		return respond(HttpStatus.UNPROCESSABLE_CONTENT, "key-reused", "Idempotency key reused", ex.getDetail(),
				ex.getKey(), null);
	}

	@ExceptionHandler
	public ResponseEntity<ProblemDetail> invalidKey(IdempotencyKeyException ex) {
		if (logger.isDebugEnabled()) {
			logger.debug("Refused a request with a missing or invalid idempotency key: " + ex.getMessage());
		}
		return respond(HttpStatus.BAD_REQUEST, "invalid-key", "Missing or invalid idempotency key", ex.getDetail(),
				null, null);
	}

	@ExceptionHandler
	public ResponseEntity<ProblemDetail> requestTooLarge(IdempotencyRequestTooLargeException ex) {
		return respond(HttpStatus.CONTENT_TOO_LARGE, "request-too-large", "Request too large", ex.getDetail(), null,
				null);
	}

	@ExceptionHandler
	public ResponseEntity<ProblemDetail> scopeUnknown(IdempotencyScopeException ex) {
		logger.error("Answered 500, the caller is unknown: " + ex.getMessage());
		return respond(HttpStatus.INTERNAL_SERVER_ERROR, "scope-unknown", "Caller unknown",
				"The server could not tell who is calling, so it did not run this request", null, null);
	}

	// The cause's message may name internal hosts: only the logs have it.
	@ExceptionHandler
	public ResponseEntity<ProblemDetail> storeUnavailable(IdempotencyStoreUnavailableException ex) {
		return respond(HttpStatus.SERVICE_UNAVAILABLE, "store-unavailable", "Idempotency store unavailable",
				ex.getDetail(), null, ex.getRetryAfter());
	}

	@ExceptionHandler
	public ResponseEntity<ProblemDetail> storeFull(IdempotencyStoreFullException ex) {
		return respond(HttpStatus.SERVICE_UNAVAILABLE, "store-full", "Idempotency store full", ex.getDetail(), null,
				ex.getRetryAfter());
	}

	@ExceptionHandler
	public ResponseEntity<ProblemDetail> resultUnavailable(IdempotencyResultException ex) {
		// A damaged record was logged where its key is known, once, as a warning.
		if (!(ex instanceof IdempotencyRecordDamagedException)) {
			logger.error("Answered 500: " + ex.getMessage(), ex.getCause());
		}
		return respond(HttpStatus.INTERNAL_SERVER_ERROR, "result-unavailable", "Stored result unavailable",
				ex.getDetail(), null, null);
	}

	static ProblemDetail problem(HttpStatus status, String type, String title, String detail) {
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(status, detail);
		problem.setType(URI.create("urn:idempotent:" + type));
		problem.setTitle(title);
		return problem;
	}

	private static ResponseEntity<ProblemDetail> respond(HttpStatus status, String type, String title, String detail,
			@Nullable String key, @Nullable Duration retryAfter) {
		ProblemDetail problem = problem(status, type, title, detail);
		if (key != null) {
			problem.setProperty("idempotencyKey", key);
		}
		ResponseEntity.HeadersBuilder<?> response = ResponseEntity.of(problem);
		if (retryAfter != null) {
			// Rounded up, at least one: Retry-After: 0 would invite a retry storm.
			long seconds = retryAfter.getSeconds() + ((retryAfter.getNano() > 0) ? 1 : 0);
			response.header(HttpHeaders.RETRY_AFTER, Long.toString(Math.max(1, seconds)));
		}
		return response.build();
	}

}
