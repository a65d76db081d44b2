package io.github.idempotent.store.jdbc;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.jdbc.core.ConnectionCallback;
import org.springframework.jdbc.core.JdbcOperations;
import org.springframework.util.StringUtils;

/**
 * The table of a {@link JdbcIdempotencyStore}: checked once at start-up, and, should it
 * go afterwards, its statements failing as a store that cannot be reached (503) rather
 * than as the caller's bug.
 */
final class JdbcTable {

	private static final List<String> COLUMNS = List.of("idempotency_key", "state", "owner_token", "fingerprint",
			"result", "expires_at");

	// SQL states of a table, schema or column that is not there (PostgreSQL, MySQL, H2).
	private static final Set<String> NOT_FOUND_STATES = Set.of("42P01", "42703", "42S02", "42S03", "42S04", "42S22",
			"90079");

	/** Unknown database; its SQL state 42000 is also every syntax error's. */
	private static final int MYSQL_UNKNOWN_DATABASE = 1049;

	final String tableName;

	private final JdbcDialect dialect;

	JdbcTable(String tableName, JdbcDialect dialect) {
		this.tableName = tableName;
		this.dialect = dialect;
	}

	void check(JdbcOperations jdbc) {
		try {
			jdbc.execute((ConnectionCallback<@Nullable Void>) this::check);
		}
		catch (DataAccessException ex) {
			throw new IllegalStateException(
					"Cannot check the table '" + this.tableName + "' of the JDBC idempotency store: " + ex.getMessage(),
					ex);
		}
	}

	private @Nullable Void check(Connection connection) throws SQLException {
		try (Statement statement = connection.createStatement();
				ResultSet columns = statement.executeQuery("SELECT * FROM " + this.tableName + " WHERE 1 = 0")) {
			ResultSetMetaData metaData = columns.getMetaData();
			Set<String> present = new LinkedHashSet<>();
			for (int i = 1; i <= metaData.getColumnCount(); i++) {
				present.add(metaData.getColumnName(i).toLowerCase(Locale.ROOT));
			}
			List<String> missing = COLUMNS.stream().filter((column) -> !present.contains(column)).toList();
			if (!missing.isEmpty()) {
				throw new JdbcTableException("The table '" + this.tableName + "' of the JDBC idempotency store in "
						+ describe(connection) + " lacks the column(s) " + missing + " (it has " + present + ").",
						remedy(false));
			}
			return null;
		}
		catch (SQLException ex) {
			if (!isNotFound(ex)) {
				throw ex;
			}
			throw new JdbcTableException("The table '" + this.tableName + "' of the JDBC idempotency store does not "
					+ "exist in " + describe(connection) + " (" + ex.getMessage() + ").", remedy(true));
		}
	}

	private String remedy(boolean missing) {
		String script = JdbcDialect.schemaPath(this.dialect.getPlatform());
		return (missing ? "Create it" : "Create it anew") + " with the script the starter ships for this database, "
				+ script + " (in its jar; replace " + JdbcIdempotencyStore.DEFAULT_TABLE_NAME
				+ " by the table's name), in your migrations (or add the starter's, for a table named "
				+ JdbcIdempotencyStore.DEFAULT_TABLE_NAME + ": Flyway location "
				+ JdbcDialect.flywayLocation(this.dialect.getPlatform()) + ", Liquibase changelog "
				+ JdbcDialect.LIQUIBASE_CHANGELOG + "), or set "
				+ "idempotent.store.jdbc.initialize-schema=always to have it created at start-up"
				+ (missing ? "" : " (which keeps an existing table: drop it first)") + ".";
	}

	/** Product, database, schema, and the URL without its parameters (a password). */
	private static String describe(Connection connection) {
		try {
			DatabaseMetaData metaData = connection.getMetaData();
			String catalog = connection.getCatalog();
			String schema = connection.getSchema();
			String url = metaData.getURL();
			return metaData.getDatabaseProductName()
					+ (StringUtils.hasLength(catalog) ? " database '" + catalog + "'" : "")
					+ (StringUtils.hasLength(schema) ? " schema '" + schema + "'" : "")
					// Without its parameters, nor a user:password@ before the host
					+ ((url != null) ? " at " + url.replaceFirst("[?;].*", "").replaceFirst("//[^/@]*@", "//") : "");
		}
		catch (SQLException | RuntimeException ex) {
			return "the database of the store's DataSource";
		}
	}

	JdbcOperations guard(JdbcOperations jdbc) {
		return (JdbcOperations) Proxy.newProxyInstance(JdbcTable.class.getClassLoader(),
				new Class<?>[] { JdbcOperations.class }, (proxy, method, args) -> {
					try {
						return method.invoke(jdbc, args);
					}
					catch (InvocationTargetException ex) {
						Throwable failure = ex.getTargetException();
						if (failure instanceof DataAccessException && isNotFound(failure)) {
							throw new DataAccessResourceFailureException("The table '" + this.tableName
									+ "' of the JDBC idempotency store is missing, or lacks a column: "
									+ failure.getMessage() + ". " + remedy(true), failure);
						}
						throw failure;
					}
				});
	}

	private static boolean isNotFound(Throwable failure) {
		return OwnTransaction.sqlException(failure,
				(sql) -> (sql.getSQLState() != null && NOT_FOUND_STATES.contains(sql.getSQLState()))
						|| sql.getErrorCode() == MYSQL_UNKNOWN_DATABASE) != null;
	}

}
