package io.github.idempotent.state;

/**
 * Outcome of a compare-and-set transition; an illegal one is an
 * {@link IllegalStateTransitionException} instead.
 *
 * @param <S> the state type
 */
public sealed interface TransitionResult<S extends Enum<S>> {

	/** This call moved the row: do the side effects now, in the same transaction. */
	record Applied<S extends Enum<S>>(S from, S to) implements TransitionResult<S> {
	}

	/** An earlier call already moved the row: do no side effect. */
	record AlreadyInTarget<S extends Enum<S>>(S state) implements TransitionResult<S> {
	}

	record NotFound<S extends Enum<S>>() implements TransitionResult<S> {
	}

}
