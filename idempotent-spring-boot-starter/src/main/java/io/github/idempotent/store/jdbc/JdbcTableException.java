package io.github.idempotent.store.jdbc;

/**
 * The table of a {@link JdbcIdempotencyStore} is missing or lacks a column: what is
 * wrong, and what to do about it, apart, so that {@link JdbcTableFailureAnalyzer} can
 * show them as Spring Boot shows every start-up failure an application must fix.
 */
@SuppressWarnings("serial")
class JdbcTableException extends IllegalStateException {

	private final String description;

	private final String action;

	JdbcTableException(String description, String action) {
		super(description + " " + action);
		this.description = description;
		this.action = action;
	}

	String getDescription() {
		return this.description;
	}

	String getAction() {
		return this.action;
	}

}
