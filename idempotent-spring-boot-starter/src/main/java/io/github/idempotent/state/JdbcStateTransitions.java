package io.github.idempotent.state;

import java.util.Arrays;
import java.util.List;
import java.util.regex.Pattern;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.util.Assert;

/**
 * Applies the transitions of a {@link StateMachine} to a state column as a
 * compare-and-set ({@code UPDATE ... WHERE id = :id AND state = :from}), so that of two
 * concurrent identical requests exactly one moves the row. Call it first inside the
 * transaction that does the side effects: the row lock is held until it ends.
 *
 * @param <S> the state type, stored by {@link Enum#name()}
 */
public class JdbcStateTransitions<S extends Enum<S>> {

	private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)?");

	private final StateMachine<S> machine;

	private final JdbcClient jdbc;

	private final String update;

	private final String select;

	/**
	 * @param table the table, a plain or schema-qualified identifier
	 * @param idColumn the column that identifies a row (unique)
	 * @param stateColumn the column that holds the state's name
	 */
	public JdbcStateTransitions(StateMachine<S> machine, JdbcClient jdbc, String table, String idColumn,
			String stateColumn) {
		Assert.notNull(machine, "machine must not be null");
		Assert.notNull(jdbc, "jdbc must not be null");
		identifier("table", table);
		identifier("idColumn", idColumn);
		identifier("stateColumn", stateColumn);
		this.machine = machine;
		this.jdbc = jdbc;
		this.update = "UPDATE %s SET %s = :to WHERE %s = :id AND %s = :from".formatted(table, stateColumn, idColumn,
				stateColumn);
		// A locking read sees the latest committed state even under REPEATABLE READ.
		this.select = "SELECT %s FROM %s WHERE %s = :id FOR UPDATE".formatted(stateColumn, table, idColumn);
	}

	/** A {@code CHAR(n)} column pads the name with spaces, which are not part of it. */
	private S state(Object id, String column) {
		String name = (column != null) ? column.stripTrailing() : null;
		return Arrays.stream(this.machine.getType().getEnumConstants())
			.filter((state) -> state.name().equals(name))
			.findFirst()
			.orElseThrow(() -> new IllegalStateException(
					"Row " + id + " has state '" + column + "', which is not a constant of "
							+ this.machine.getType().getName() + ": fix the row, or add the state to the enum"));
	}

	private static void identifier(String name, String value) {
		Assert.isTrue(value != null && IDENTIFIER.matcher(value).matches(),
				() -> name + " must be an SQL identifier, got '" + value + "'");
	}

	public StateMachine<S> getMachine() {
		return this.machine;
	}

	/**
	 * Moves row {@code id} from {@code from} to {@code to} if it is still in
	 * {@code from}.
	 * @throws IllegalArgumentException if the machine never allows {@code from} to
	 * {@code to}
	 * @throws IllegalStateTransitionException if the row is in another state than
	 * {@code from} and {@code to}
	 */
	public TransitionResult<S> transition(Object id, S from, S to) {
		Assert.notNull(id, "id must not be null");
		Assert.isTrue(this.machine.allows(from, to), () -> "The state machine does not allow " + from + " -> " + to
				+ "; allowed from " + from + ": " + this.machine.targetsOf(from));
		int updated = this.jdbc.sql(this.update)
			.param("to", to.name())
			.param("id", id)
			.param("from", from.name())
			.update();
		if (updated == 1) {
			return new TransitionResult.Applied<>(from, to);
		}
		Assert.state(updated == 0, () -> updated + " rows have id " + id + ": the id column must be unique");
		List<String> states = this.jdbc.sql(this.select).param("id", id).query(String.class).list();
		if (states.isEmpty()) {
			return new TransitionResult.NotFound<>();
		}
		S current = state(id, states.get(0));
		if (current == to) {
			return new TransitionResult.AlreadyInTarget<>(to);
		}
		// The caller's premise (the row is in from) is wrong: its side effects must not
		// run, whether or not current -> to is allowed.
		throw new IllegalStateTransitionException(id, current, to, this.machine.targetsOf(current));
	}

}
