package io.github.idempotent.demo.checkout;

import java.net.URI;

import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

import io.github.idempotent.state.IllegalStateTransitionException;

/**
 * The checkout's refusals as RFC 9457 problems. The starter's own advice answers the
 * idempotency refusals (400, 409 in progress, 422 key reused, 503).
 */
@RestControllerAdvice
class CheckoutProblems {

	@ExceptionHandler
	ResponseEntity<ProblemDetail> checkout(CheckoutException ex) {
		return ResponseEntity.of(problem(ex.getStatus(), ex.getType(), ex.getMessage())).build();
	}

	/**
	 * 409 without {@code Retry-After}: the order's state forbids this, now and on retry.
	 */
	@ExceptionHandler
	ResponseEntity<ProblemDetail> illegalTransition(IllegalStateTransitionException ex) {
		ProblemDetail problem = problem(HttpStatus.CONFLICT, "illegal-transition", ex.getMessage());
		problem.setProperty("orderNo", ex.getId());
		problem.setProperty("orderStatus", ex.getCurrent().name());
		problem.setProperty("requested", ex.getTarget().name());
		return ResponseEntity.of(problem).build();
	}

	private static ProblemDetail problem(HttpStatus status, String type, String detail) {
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(status, detail);
		problem.setType(URI.create("urn:checkout-demo:" + type));
		problem.setTitle(title(type));
		return problem;
	}

	private static String title(String type) {
		String words = type.replace('-', ' ');
		return Character.toUpperCase(words.charAt(0)) + words.substring(1);
	}

}
