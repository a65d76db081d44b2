/**
 * Guarded state transitions: a {@link io.github.idempotent.state.StateMachine} says which
 * transitions are legal, and {@link io.github.idempotent.state.JdbcStateTransitions}
 * applies one as a compare-and-set.
 */
package io.github.idempotent.state;
