package io.github.idempotent.store.jdbc;

/**
 * The table of a {@link JdbcIdempotencyStore} is missing or lacks a column; the problem
 * and the action apart, for {@link JdbcTableFailureAnalyzer}.
 */
@SuppressWarnings("serial")
class JdbcTableException extends IllegalStateException {

	final String description;

	final String action;

	JdbcTableException(String description, String action) {
		super(description + " " + action);
		this.description = description;
		this.action = action;
	}

}
