package io.github.idempotent.state;

import java.util.Set;

/**
 * A transition the {@link StateMachine} does not allow from the entity's current state,
 * such as refunding an order never paid: a conflict (HTTP 409) a retry cannot fix.
 */
public class IllegalStateTransitionException extends RuntimeException {

	private final Object id;

	private final Enum<?> current;

	private final Enum<?> target;

	private final Set<? extends Enum<?>> allowed;

	public IllegalStateTransitionException(Object id, Enum<?> current, Enum<?> target, Set<? extends Enum<?>> allowed) {
		super("Cannot move " + id + " from " + current + " to " + target + ": "
				+ (allowed.isEmpty() ? current + " is final" : "from " + current + " it can only move to " + allowed));
		this.id = id;
		this.current = current;
		this.target = target;
		this.allowed = Set.copyOf(allowed);
	}

	public Object getId() {
		return this.id;
	}

	public Enum<?> getCurrent() {
		return this.current;
	}

	public Enum<?> getTarget() {
		return this.target;
	}

	/** States the entity could have moved to. */
	public Set<? extends Enum<?>> getAllowed() {
		return this.allowed;
	}

}
