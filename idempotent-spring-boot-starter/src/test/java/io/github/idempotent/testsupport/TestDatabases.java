package io.github.idempotent.testsupport;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.UUID;

import com.zaxxer.hikari.HikariDataSource;

/**
 * The databases the JDBC tests use: PostgreSQL and MariaDB on this machine
 * ({@code IDEMPOTENT_POSTGRESQL_URL} and {@code IDEMPOTENT_MARIADB_URL} point elsewhere),
 * and a private in-memory H2. Tests that need a server carry {@link RequiresDatabase}: on
 * CI they always run; a server that answers the port check but refuses the connection
 * fails the test with what is wrong.
 */
public final class TestDatabases {

	private static final String POSTGRESQL_URL = "jdbc:postgresql://127.0.0.1:5432/test";

	private static final String MARIADB_URL = "jdbc:mariadb://127.0.0.1:3306/test";

	private TestDatabases() {
	}

	public static HikariDataSource postgresql() {
		return connect("PostgreSQL", postgresqlUrl(), "postgres", "");
	}

	/**
	 * The PostgreSQL URL, for {@code spring.datasource.url} (user {@code postgres}, no
	 * password).
	 */
	public static String postgresqlUrl() {
		return url("IDEMPOTENT_POSTGRESQL_URL", POSTGRESQL_URL);
	}

	public static HikariDataSource mariadb() {
		return connect("MariaDB", mariadbUrl(), "root", "");
	}

	/**
	 * The MariaDB URL (user {@code root}, no password).
	 */
	public static String mariadbUrl() {
		return url("IDEMPOTENT_MARIADB_URL", MARIADB_URL);
	}

	/**
	 * A new in-memory H2 database of the caller's own, alive until the pool closes.
	 */
	public static HikariDataSource h2() {
		return connect("H2", "jdbc:h2:mem:" + UUID.randomUUID(), "sa", "");
	}

	/**
	 * A table name of the caller's own, so that test classes running against one shared
	 * database never see each other's rows.
	 */
	public static String uniqueTableName(String prefix) {
		return prefix + "_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
	}

	private static String url(String variable, String fallback) {
		String url = System.getenv(variable);
		return (url != null && !url.isBlank()) ? url : fallback;
	}

	private static HikariDataSource connect(String name, String url, String user, String password) {
		HikariDataSource dataSource = new HikariDataSource();
		dataSource.setJdbcUrl(url);
		dataSource.setUsername(user);
		dataSource.setPassword(password);
		// The store's storm test claims from 64 threads at once.
		dataSource.setMaximumPoolSize(16);
		dataSource.setConnectionTimeout(10_000);
		dataSource.setInitializationFailTimeout(-1);
		try (Connection connection = dataSource.getConnection()) {
			connection.isValid(5);
		}
		catch (SQLException | RuntimeException ex) {
			dataSource.close();
			throw new IllegalStateException(name + " does not answer at " + url + " (" + ex.getMessage()
					+ "). The JDBC tests need it: start it (see README) or point the IDEMPOTENT_*_URL variable at one",
					ex);
		}
		return dataSource;
	}

}
