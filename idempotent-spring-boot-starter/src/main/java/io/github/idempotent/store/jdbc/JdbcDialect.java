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
 * The few SQL fragments that differ between the supported databases. Every time the store
 * compares or computes is the database's clock, never the JVM's: instances whose clocks
 * drift apart still agree on when a lease or a result expires.
 */
public enum JdbcDialect {

	/**
	 * H2 2.x. {@code CURRENT_TIMESTAMP} is fixed for a transaction on H2, which only
	 * matters for a completion that joins a long transaction.
	 */
	H2("h2", "CURRENT_TIMESTAMP", "DATEADD(MILLISECOND, ?, CURRENT_TIMESTAMP)",
			"DATEDIFF(MILLISECOND, CURRENT_TIMESTAMP, expires_at)", "",
			"DELETE FROM %TABLE_NAME% WHERE " + JdbcDialect.PURGEABLE + " FETCH FIRST ? ROWS ONLY"),

	/**
	 * PostgreSQL. {@code statement_timestamp()} rather than {@code CURRENT_TIMESTAMP},
	 * which is the start of the transaction. The claim uses {@code ON CONFLICT DO
	 * NOTHING}: a duplicate is a row count of 0, not an error that aborts the surrounding
	 * transaction and fills the server log with one ERROR per replay. The purge skips
	 * rows that another instance is deleting.
	 */
	POSTGRESQL("postgresql", "statement_timestamp()",
			"statement_timestamp() + CAST(? AS BIGINT) * INTERVAL '1 millisecond'",
			"CAST(FLOOR(EXTRACT(EPOCH FROM (expires_at - statement_timestamp())) * 1000) AS BIGINT)",
			" ON CONFLICT (idempotency_key) DO NOTHING", """
					DELETE FROM %TABLE_NAME% WHERE idempotency_key IN (SELECT idempotency_key FROM %TABLE_NAME%
					WHERE %PURGEABLE% LIMIT ? FOR UPDATE SKIP LOCKED)""".replace("%PURGEABLE%", JdbcDialect.PURGEABLE),
			null, JdbcDialect.POSTGRESQL_CLAIM),

	/**
	 * MySQL 8.0+ and MariaDB 10.6+, with {@code expires_at} in UTC so that sessions with
	 * different time zones agree. The purge first locks a batch of expired rows, skipping
	 * those that are locked, then deletes them by key, at READ COMMITTED: a plain
	 * {@code DELETE ... LIMIT} locks index ranges (gaps included) in an order opposite to
	 * a claim's, and InnoDB broke the resulting deadlocks by failing claims. A claim
	 * reads the row before it inserts, so that a replay is one read without a lock. Its
	 * INSERT is an {@code INSERT IGNORE}: a duplicate is a row count of 0, as on
	 * PostgreSQL, not an error, which MariaDB's driver would log at WARN with the key in
	 * it; it takes the same shared lock on the row it finds. The values it ignores errors
	 * of are the store's own, each within the shipped columns (a key of up to 512
	 * characters in 2048 bytes), and a completion's INSERT, which writes the result,
	 * stays a plain one.
	 */
	MYSQL("mysql", "UTC_TIMESTAMP(6)", "TIMESTAMPADD(MICROSECOND, ? * 1000, UTC_TIMESTAMP(6))",
			"(TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at) DIV 1000)", "",
			// By key only: the rows are locked, so nobody took them over since they were
			// read expired; a condition on expires_at could make InnoDB scan that index
			// and wait on rows another purge locked.
			"DELETE FROM %TABLE_NAME% WHERE idempotency_key IN (%KEYS%)",
			"SELECT idempotency_key FROM %TABLE_NAME% WHERE " + JdbcDialect.PURGEABLE
					+ " LIMIT ? FOR UPDATE SKIP LOCKED",
			null, true, "INSERT IGNORE");

	/**
	 * PostgreSQL's claim in one round trip: the placeholder inserted (a row with
	 * {@code inserted = 1}), or the row that was there (the columns of
	 * {@link JdbcStatements#select}, then whether another transaction had written or
	 * locked that version). A duplicate writes nothing and locks nothing ({@code DO
	 * NOTHING}, not a no-op update). The read of the existing row uses the statement's
	 * snapshot, taken before the INSERT waited on a conflicting row whose transaction was
	 * still open, so it may miss what that transaction committed meanwhile: a row it
	 * inserted (the statement answers no row at all) or its update of the row (the
	 * version read has that transaction in its {@code xmax}, which is 0 for a version
	 * nobody touched, as the latest version of every completed or renewed row). In both
	 * cases the claim reads the row again with a statement of its own, which at READ
	 * COMMITTED takes a new snapshot.
	 */
	private static final String POSTGRESQL_CLAIM = """
			WITH inserted AS (
			INSERT INTO %TABLE_NAME% (idempotency_key, state, owner_token, fingerprint, expires_at)
			VALUES (?, 'P', ?, ?, %NOW_PLUS_MILLIS%) ON CONFLICT (idempotency_key) DO NOTHING
			RETURNING 1)
			SELECT 1 AS inserted, NULL AS state, NULL AS owner_token, NULL AS fingerprint, NULL AS result,
			0 AS millis_left, 0 AS expired, 0 AS touched FROM inserted
			UNION ALL
			SELECT 0, state, owner_token, fingerprint, result, %MILLIS_LEFT%,
			CASE WHEN expires_at <= %NOW% THEN 1 ELSE 0 END, CASE WHEN xmax::text = '0' THEN 0 ELSE 1 END
			FROM %TABLE_NAME% WHERE idempotency_key = ? AND NOT EXISTS (SELECT 1 FROM inserted)""";

	/**
	 * The shipped Liquibase changelog: one changeset per database that runs its schema
	 * script.
	 */
	static final String LIQUIBASE_CHANGELOG = "io/github/idempotent/store/jdbc/liquibase/changelog.xml";

	private static final Pattern SHIPPED_NAMES = Pattern
		.compile("\\b" + JdbcIdempotencyStore.DEFAULT_TABLE_NAME + "(?:_(\\w+))?\\b");

	/**
	 * Which rows a purge deletes: results past their TTL, and calls that never finished
	 * (rows in progress, tombstones) only once the store's take-over memory (the
	 * parameter, in milliseconds, negative) has passed since their lease ran out, so that
	 * a claim of their key until then knows it takes one over. The first condition keeps
	 * the range scan on the {@code expires_at} index; the few unfinished rows kept are
	 * filtered out of it.
	 */
	private static final String PURGEABLE = "expires_at < %NOW% AND (state = 'C' OR expires_at < %NOW_PLUS_MILLIS%)";

	private final String platform;

	private final String now;

	private final String nowPlusMillis;

	private final String millisLeft;

	private final String insertSuffix;

	private final String purge;

	private final String purgeLock;

	private final String claim;

	private final boolean claimReadsFirst;

	private final String claimInsert;

	JdbcDialect(String platform, String now, String nowPlusMillis, String millisLeft, String insertSuffix,
			String purge) {
		this(platform, now, nowPlusMillis, millisLeft, insertSuffix, purge, null);
	}

	JdbcDialect(String platform, String now, String nowPlusMillis, String millisLeft, String insertSuffix, String purge,
			String purgeLock) {
		this(platform, now, nowPlusMillis, millisLeft, insertSuffix, purge, purgeLock, null);
	}

	JdbcDialect(String platform, String now, String nowPlusMillis, String millisLeft, String insertSuffix, String purge,
			String purgeLock, String claim) {
		this(platform, now, nowPlusMillis, millisLeft, insertSuffix, purge, purgeLock, claim, false, "INSERT");
	}

	JdbcDialect(String platform, String now, String nowPlusMillis, String millisLeft, String insertSuffix, String purge,
			String purgeLock, String claim, boolean claimReadsFirst, String claimInsert) {
		this.platform = platform;
		this.now = now;
		this.nowPlusMillis = nowPlusMillis;
		this.millisLeft = millisLeft;
		this.insertSuffix = insertSuffix;
		this.purge = purge;
		this.purgeLock = purgeLock;
		this.claim = claim;
		this.claimReadsFirst = claimReadsFirst;
		this.claimInsert = claimInsert;
	}

	/**
	 * Platform name of the schema script, as in {@code schema-{platform}.sql}.
	 */
	public String getPlatform() {
		return this.platform;
	}

	/**
	 * Location of the schema script of this database, on the classpath.
	 */
	public String getSchemaLocation() {
		return "classpath:" + schemaPath(this.platform);
	}

	static String schemaPath(String platform) {
		return "io/github/idempotent/store/jdbc/schema-" + platform + ".sql";
	}

	/**
	 * Where Flyway finds the shipped migration of this database: a copy of its schema
	 * script, as a repeatable migration ({@code R__idempotency_record.sql}).
	 */
	static String flywayLocation(String platform) {
		return "classpath:io/github/idempotent/store/jdbc/flyway/" + platform;
	}

	/**
	 * The schema script of this database for a table named {@code tableName}: the shipped
	 * script names the table (and its index)
	 * {@value JdbcIdempotencyStore#DEFAULT_TABLE_NAME}.
	 */
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
	 * after it by the table's name without its schema: they live in the table's schema,
	 * and PostgreSQL and MySQL refuse a qualified name for them.
	 */
	public static String withTableName(String script, String tableName) {
		String objectPrefix = tableName.substring(tableName.lastIndexOf('.') + 1) + "_";
		// In one pass: renaming the table first would qualify the names that start with
		// it, and renaming them first would leave nothing to tell them from the table
		// when the unqualified name is the shipped one (payments.idempotency_record).
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
		String name = productName.toLowerCase(Locale.ROOT);
		if (name.contains("h2")) {
			return H2;
		}
		if (name.contains("postgresql")) {
			return POSTGRESQL;
		}
		if (name.contains("mysql") || name.contains("mariadb")) {
			return MYSQL;
		}
		throw new IllegalArgumentException("No JdbcDialect for database '" + productName
				+ "': the JDBC store supports H2, PostgreSQL, MySQL and MariaDB");
	}

	String sql(String template, String tableName) {
		return template.replace("%CLAIM_INSERT%", this.claimInsert)
			.replace("%INSERT_SUFFIX%", this.insertSuffix)
			.replace("%NOW_PLUS_MILLIS%", this.nowPlusMillis)
			.replace("%MILLIS_LEFT%", this.millisLeft)
			.replace("%NOW%", this.now)
			.replace("%TABLE_NAME%", tableName);
	}

	/**
	 * One statement that deletes up to {@code ?} expired rows; or, when
	 * {@link #purgeLockSql} is not {@code null}, the statement that deletes the rows it
	 * locked, by key, in place of {@code %KEYS%}.
	 */
	String purgeSql(String tableName) {
		return sql(this.purge, tableName);
	}

	/**
	 * The claim as one query that inserts the placeholder or returns the row there was,
	 * or {@code null} where the claim is an INSERT and a {@link JdbcStatements#select}
	 * (in the order of {@link #claimReadsFirst}). MySQL and MariaDB have no such form: an
	 * INSERT returns no row it did not insert (MariaDB's {@code RETURNING} included),
	 * {@code ON DUPLICATE KEY UPDATE} locks the row it finds, and several statements in
	 * one round trip need a connection setting ({@code allowMultiQueries}) that is off by
	 * default.
	 */
	String claimSql(String tableName) {
		return (this.claim != null) ? sql(this.claim, tableName) : null;
	}

	/**
	 * Whether a claim without {@link #claimSql one statement} reads the row before it
	 * inserts the placeholder (MySQL and MariaDB), rather than after its INSERT found a
	 * duplicate (H2): the store's default, which
	 * {@link JdbcIdempotencyStore#setClaimReadsFirst} changes. On InnoDB the read is a
	 * consistent read, which locks nothing and waits for nobody, where an INSERT that
	 * finds a duplicate takes a shared lock on it and so waits for any transaction that
	 * has written or locked the row (a completion joined to its caller's transaction). A
	 * replay, and the claim of a call in progress, are then that one {@code SELECT}; a
	 * first claim is the {@code SELECT} that finds nothing and the INSERT.
	 */
	boolean claimReadsFirst() {
		return this.claimReadsFirst;
	}

	/**
	 * The query that locks and returns the keys of up to {@code ?} expired rows, skipping
	 * locked ones, or {@code null} when the purge is one statement.
	 */
	String purgeLockSql(String tableName) {
		return (this.purgeLock != null) ? sql(this.purgeLock, tableName) : null;
	}

}
