package io.github.idempotent.store.jdbc;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.springframework.util.Assert;

/**
 * The SQL fragments that differ between the supported databases. Every time is the
 * database's clock, so that instances whose clocks drift still agree on expiry.
 */
public enum JdbcDialect {

	/** H2 2.x; {@code CURRENT_TIMESTAMP} is fixed for a transaction. */
	H2("h2", "CURRENT_TIMESTAMP", "DATEADD(MILLISECOND, ?, CURRENT_TIMESTAMP)",
			"DATEDIFF(MILLISECOND, CURRENT_TIMESTAMP, expires_at)", "INSERT", ""),

	/**
	 * PostgreSQL: {@code statement_timestamp()}, and a claim with {@code ON CONFLICT DO
	 * NOTHING}, so that a duplicate does not abort the surrounding transaction.
	 */
	POSTGRESQL("postgresql", "statement_timestamp()",
			"statement_timestamp() + CAST(? AS BIGINT) * INTERVAL '1 millisecond'",
			"CAST(FLOOR(EXTRACT(EPOCH FROM (expires_at - statement_timestamp())) * 1000) AS BIGINT)", "INSERT",
			" ON CONFLICT (idempotency_key) DO NOTHING"),

	/**
	 * MySQL 8.0+ and MariaDB 10.6+, {@code expires_at} in UTC. {@code INSERT IGNORE}
	 * answers a duplicate with a row count.
	 */
	MYSQL("mysql", "UTC_TIMESTAMP(6)", "TIMESTAMPADD(MICROSECOND, ? * 1000, UTC_TIMESTAMP(6))",
			"(TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at) DIV 1000)", "INSERT IGNORE", "");

	static final String LIQUIBASE_CHANGELOG = "io/github/idempotent/store/jdbc/liquibase/changelog.xml";

	private static final Pattern SHIPPED_NAMES = Pattern
		.compile("\\b" + JdbcIdempotencyStore.DEFAULT_TABLE_NAME + "(?:_(\\w+))?\\b");

	/** What {@link #sql} replaces by the fragments of a dialect, in their order. */
	private static final String[] PLACEHOLDERS = { "%NOW%", "%NOW_PLUS_MILLIS%", "%MILLIS_LEFT%", "%CLAIM_INSERT%",
			"%INSERT_SUFFIX%" };

	private final String platform;

	private final String[] fragments;

	JdbcDialect(String platform, String... fragments) {
		this.platform = platform;
		this.fragments = fragments;
	}

	/** Platform name of the schema script, as in {@code schema-{platform}.sql}. */
	public String getPlatform() {
		return this.platform;
	}

	/** Location of the schema script of this database, on the classpath. */
	public String getSchemaLocation() {
		return "classpath:" + schemaPath(this.platform);
	}

	static String schemaPath(String platform) {
		return "io/github/idempotent/store/jdbc/schema-" + platform + ".sql";
	}

	static String flywayLocation(String platform) {
		return "classpath:io/github/idempotent/store/jdbc/flyway/" + platform;
	}

	/** The schema script of this database for a table named {@code tableName}. */
	public String schema(String tableName) {
		try (InputStream in = JdbcDialect.class.getClassLoader().getResourceAsStream(schemaPath(this.platform))) {
			Assert.state(in != null, () -> "Schema script " + schemaPath(this.platform) + " is missing");
			return withTableName(new String(in.readAllBytes(), StandardCharsets.UTF_8), tableName);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * Renames the table in a shipped schema script, and the constraint and indexes named
	 * after it by its unqualified name (PostgreSQL and MySQL refuse a qualified one).
	 */
	public static String withTableName(String script, String tableName) {
		String objectPrefix = tableName.substring(tableName.lastIndexOf('.') + 1) + "_";
		// In one pass: renaming the table first would qualify the names starting with it.
		return SHIPPED_NAMES.matcher(script)
			.replaceAll((match) -> Matcher
				.quoteReplacement((match.group(1) != null) ? objectPrefix + match.group(1) : tableName));
	}

	/**
	 * The dialect of a database product, as JDBC metadata names it.
	 * @throws IllegalArgumentException for a database without a dialect
	 */
	public static JdbcDialect forProductName(String productName) {
		Assert.hasText(productName, "productName must not be empty");
		String name = productName.toLowerCase(Locale.ROOT).replace("mariadb", "mysql");
		for (JdbcDialect dialect : values()) {
			if (name.contains(dialect.platform)) {
				return dialect;
			}
		}
		throw new IllegalArgumentException("No JdbcDialect for database '" + productName
				+ "': the JDBC store supports H2, PostgreSQL, MySQL and MariaDB");
	}

	String sql(String template, String tableName) {
		String sql = template.replace("%TABLE_NAME%", tableName);
		for (int i = 0; i < PLACEHOLDERS.length; i++) {
			sql = sql.replace(PLACEHOLDERS[i], this.fragments[i]);
		}
		return sql;
	}

}
