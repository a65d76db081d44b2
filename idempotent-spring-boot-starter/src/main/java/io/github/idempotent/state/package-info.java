/**
 * Guarded state transitions: a {@link io.github.idempotent.state.StateMachine} says which
 * are legal, and {@link io.github.idempotent.state.JdbcStateTransitions} applies one as a
 * compare-and-set, so the second of two identical operations does nothing.
 */
package io.github.idempotent.state;
