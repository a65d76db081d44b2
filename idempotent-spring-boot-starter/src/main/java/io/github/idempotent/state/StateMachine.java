package io.github.idempotent.state;

import java.util.Collections;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import org.springframework.util.Assert;

/**
 * Transition table of an enum of states; immutable once built.
 *
 * <pre class="code">
 * StateMachine&lt;OrderStatus&gt; orders = StateMachine.builder(OrderStatus.class)
 * 	.allow(CREATED, PAID, CANCELLED)
 * 	.allow(PAID, REFUNDED, SHIPPED)
 * 	.build();
 * </pre>
 *
 * @param <S> the state type
 */
public final class StateMachine<S extends Enum<S>> {

	private final Class<S> type;

	private final Map<S, Set<S>> targets;

	private StateMachine(Class<S> type, Map<S, Set<S>> targets) {
		this.type = type;
		this.targets = targets;
	}

	public static <S extends Enum<S>> Builder<S> builder(Class<S> type) {
		Assert.notNull(type, "type must not be null");
		return new Builder<>(type);
	}

	public Class<S> getType() {
		return this.type;
	}

	/** Whether {@code from} may move to {@code to} in one step. */
	public boolean allows(S from, S to) {
		return this.targets.get(from).contains(to);
	}

	/** States that {@code from} may move to, empty for a final state. */
	public Set<S> targetsOf(S from) {
		return this.targets.get(from);
	}

	/** States that may move to {@code to}. */
	public Set<S> sourcesOf(S to) {
		return this.targets.keySet()
			.stream()
			.filter((from) -> allows(from, to))
			.collect(Collectors.toCollection(() -> EnumSet.noneOf(this.type)));
	}

	/**
	 * Decides what asking an entity in state {@code current} to move to {@code target}
	 * means: {@link Decision#ALREADY_IN_TARGET} for a repeated request.
	 * @throws IllegalStateTransitionException if the transition is not in the table
	 */
	public Decision decide(Object id, S current, S target) {
		Assert.notNull(current, "current must not be null");
		Assert.notNull(target, "target must not be null");
		if (current == target) {
			return Decision.ALREADY_IN_TARGET;
		}
		if (allows(current, target)) {
			return Decision.APPLY;
		}
		throw new IllegalStateTransitionException(id, current, target, targetsOf(current));
	}

	public enum Decision {

		/** The transition is legal: apply it. */
		APPLY,

		/** The entity is already in the target state: a repeat, nothing to do. */
		ALREADY_IN_TARGET

	}

	/**
	 * Builds a {@link StateMachine}; states never named as a source are final.
	 *
	 * @param <S> the state type
	 */
	public static final class Builder<S extends Enum<S>> {

		private final Class<S> type;

		private final Map<S, EnumSet<S>> targets;

		private Builder(Class<S> type) {
			this.type = type;
			this.targets = new EnumMap<>(type);
		}

		/** Allows {@code from} to move to each of {@code to}. */
		@SafeVarargs
		public final Builder<S> allow(S from, S... to) {
			Assert.notNull(from, "from must not be null");
			Assert.notEmpty(to, "to must name at least one state");
			for (S target : to) {
				Assert.notNull(target, "to must not contain null");
				Assert.isTrue(target != from, () -> "A transition from " + from + " to itself is implicit: "
						+ "a request for the current state is reported as already in target, not applied");
				this.targets.computeIfAbsent(from, (key) -> EnumSet.noneOf(this.type)).add(target);
			}
			return this;
		}

		public StateMachine<S> build() {
			Map<S, Set<S>> table = new EnumMap<>(this.type);
			for (S state : this.type.getEnumConstants()) {
				table.put(state, Collections
					.unmodifiableSet(this.targets.getOrDefault(state, EnumSet.noneOf(this.type)).clone()));
			}
			return new StateMachine<>(this.type, Collections.unmodifiableMap(table));
		}

	}

}
