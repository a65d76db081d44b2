/**
 * Guarded state transitions, the third mechanism beside idempotency keys and unique
 * constraints: a {@link io.github.idempotent.state.StateMachine} says which transitions
 * are legal, and {@link io.github.idempotent.state.JdbcStateTransitions} applies one as a
 * compare-and-set {@code UPDATE ... WHERE state = :from}, so that the second of two
 * identical operations finds the row already moved and does nothing.
 */
package io.github.idempotent.state;
