package io.github.idempotent.web;

import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

import io.github.idempotent.state.IllegalStateTransitionException;

/**
 * Maps a transition a {@code StateMachine} refuses to a 409 problem without
 * {@code Retry-After}, at the lowest precedence: any application advice that handles it
 * wins.
 */
@RestControllerAdvice
@Order(Ordered.LOWEST_PRECEDENCE)
public class StateTransitionProblemHandler {

	@ExceptionHandler
	public ResponseEntity<ProblemDetail> illegalTransition(IllegalStateTransitionException ex) {
		ProblemDetail problem = IdempotencyProblemHandler.problem(HttpStatus.CONFLICT, "illegal-transition",
				"Illegal state transition", ex.getMessage());
		problem.setProperty("currentState", ex.getCurrent().name());
		problem.setProperty("targetState", ex.getTarget().name());
		return ResponseEntity.of(problem).build();
	}

}
