package io.github.idempotent.benchmarks.http;

import java.time.Duration;
import java.util.Arrays;

import org.springframework.beans.factory.InitializingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowMapper;
import org.springframework.util.Assert;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

import io.github.idempotent.autoconfigure.IdempotentProperties;
import io.github.idempotent.store.jdbc.JdbcIdempotencyStore;

import static io.github.idempotent.benchmarks.http.PaymentController.receipt;

/**
 * The references of the JDBC store on PostgreSQL, MySQL or MariaDB, without the library:
 * the bare work plus the statements a first call or a replay needs, written as the store
 * writes them, on the store's own table and through the same {@code DataSource} (Boot's
 * {@code JdbcTemplate} on the application's one {@code DataSource}, which the store uses
 * too), in autocommit, one round trip per statement. The rows have the sizes of the ones
 * {@code /first} writes for this receipt.
 */
@RestController
@ConditionalOnProperty(name = "idempotent.store.type", havingValue = "jdbc")
public class JdbcReferenceController implements InitializingBean {

	// The store's claim, completion and read (JdbcIdempotencyStore, PostgreSQL dialect).
	private static final String POSTGRESQL_INSERT = """
			INSERT INTO %s (idempotency_key, state, owner_token, fingerprint, expires_at)
			VALUES (?, 'P', ?, ?, statement_timestamp() + CAST(? AS BIGINT) * INTERVAL '1 millisecond')
			ON CONFLICT (idempotency_key) DO NOTHING""";

	private static final String POSTGRESQL_UPDATE = """
			UPDATE %s SET state = 'C', result = ?,
			expires_at = statement_timestamp() + CAST(? AS BIGINT) * INTERVAL '1 millisecond'
			WHERE idempotency_key = ? AND owner_token = ? AND state = 'P'""";

	private static final String POSTGRESQL_SELECT = """
			SELECT state, owner_token, fingerprint, result,
			CAST(FLOOR(EXTRACT(EPOCH FROM (expires_at - statement_timestamp())) * 1000) AS BIGINT) AS millis_left,
			CASE WHEN expires_at <= statement_timestamp() THEN 1 ELSE 0 END AS expired
			FROM %s WHERE idempotency_key = ?""";

	// The same on MySQL and MariaDB (MYSQL dialect): a plain INSERT, whose duplicate is
	// an error.
	private static final String MYSQL_INSERT = """
			INSERT INTO %s (idempotency_key, state, owner_token, fingerprint, expires_at)
			VALUES (?, 'P', ?, ?, TIMESTAMPADD(MICROSECOND, ? * 1000, UTC_TIMESTAMP(6)))""";

	private static final String MYSQL_UPDATE = """
			UPDATE %s SET state = 'C', result = ?,
			expires_at = TIMESTAMPADD(MICROSECOND, ? * 1000, UTC_TIMESTAMP(6))
			WHERE idempotency_key = ? AND owner_token = ? AND state = 'P'""";

	private static final String MYSQL_SELECT = """
			SELECT state, owner_token, fingerprint, result,
			(TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at) DIV 1000) AS millis_left,
			CASE WHEN expires_at <= UTC_TIMESTAMP(6) THEN 1 ELSE 0 END AS expired
			FROM %s WHERE idempotency_key = ?""";

	private static final RowMapper<byte[]> RESULT_MAPPER = (rs, rowNum) -> {
		// Every column, as the store reads them.
		rs.getString(1);
		rs.getString(2);
		rs.getString(3);
		rs.getLong(5);
		rs.getInt(6);
		return rs.getBytes(4);
	};

	/**
	 * Prefixes the {@code Idempotency-Key} header into a key as long as the one
	 * {@code /first} stores for the same header, whose 46 characters before the header
	 * ({@code idempotent:_:PaymentController.first~792560a8:}) are also the same in every
	 * key.
	 */
	private static final String KEY_PREFIX = "statements2:" + "_".repeat(34);

	/**
	 * As long as the key {@code /replay} stores for the script's fixed header
	 * ({@code replay-} and its process id).
	 */
	private static final String FIXED_KEY = "statements1:" + "_".repeat(34) + "replay-00000";

	/**
	 * As long as a claim's owner token.
	 */
	private static final String TOKEN = "t".repeat(41);

	/**
	 * As long as the fingerprint of a request (a SHA-256, base64url).
	 */
	private static final String FINGERPRINT = "f".repeat(43);

	/**
	 * As long as the result {@code /first} stores for this receipt (198 bytes: the
	 * response, deflated as {@code idempotent.result-compression} stores it by default).
	 */
	private static final byte[] RESULT = filled(198);

	private final JdbcTemplate jdbc;

	private final String insertSql;

	private final String updateSql;

	private final String selectSql;

	private final long leaseMillis;

	private final long ttlMillis;

	public JdbcReferenceController(JdbcTemplate jdbc, JdbcIdempotencyStore store, IdempotentProperties properties) {
		this.jdbc = jdbc;
		boolean postgresql = switch (store.getDialect()) {
			case POSTGRESQL -> true;
			case MYSQL -> false;
			default -> throw new IllegalStateException(
					"The JDBC references run on PostgreSQL, MySQL or MariaDB, not " + store.getDialect());
		};
		this.insertSql = (postgresql ? POSTGRESQL_INSERT : MYSQL_INSERT).formatted(store.getTableName());
		this.updateSql = (postgresql ? POSTGRESQL_UPDATE : MYSQL_UPDATE).formatted(store.getTableName());
		this.selectSql = (postgresql ? POSTGRESQL_SELECT : MYSQL_SELECT).formatted(store.getTableName());
		this.leaseMillis = properties.lease().toMillis();
		this.ttlMillis = properties.ttl().toMillis();
	}

	/**
	 * Writes the one row {@code /statements1} reads, completed.
	 */
	@Override
	public void afterPropertiesSet() {
		insert(FIXED_KEY);
		update(FIXED_KEY, Duration.ofDays(1).toMillis());
	}

	/**
	 * The bare work plus the one statement a replay needs: a {@code SELECT} of a
	 * completed row by its key, the same row every time.
	 */
	@PostMapping("/statements1/payments")
	public ResponseEntity<Receipt> statements1(@RequestBody PaymentRequest request) {
		byte[] result = this.jdbc.queryForObject(this.selectSql, RESULT_MAPPER, FIXED_KEY);
		Assert.state(result != null && result.length == RESULT.length, "The row of /statements1 has changed");
		return receipt(request);
	}

	/**
	 * The bare work between the two statements a first call needs: an {@code INSERT} of a
	 * row in progress under a fresh key (from the {@code Idempotency-Key} header, new per
	 * request), then an {@code UPDATE} of it to completed, with a result of the size
	 * {@code /first} stores. The update's condition on the token and the state is the
	 * store's fence; in SQL it costs no statement of its own.
	 */
	@PostMapping("/statements2/payments")
	public ResponseEntity<Receipt> statements2(@RequestHeader("Idempotency-Key") String key,
			@RequestBody PaymentRequest request) {
		String rowKey = KEY_PREFIX + key;
		insert(rowKey);
		ResponseEntity<Receipt> receipt = receipt(request);
		update(rowKey, this.ttlMillis);
		return receipt;
	}

	private void insert(String key) {
		int inserted = this.jdbc.update(this.insertSql, key, TOKEN, FINGERPRINT, this.leaseMillis);
		Assert.state(inserted == 1, () -> "Key '" + key + "' was not fresh");
	}

	private void update(String key, long ttlMillis) {
		int updated = this.jdbc.update(this.updateSql, RESULT, ttlMillis, key, TOKEN);
		Assert.state(updated == 1, () -> "Row '" + key + "' was not in progress");
	}

	private static byte[] filled(int length) {
		byte[] bytes = new byte[length];
		Arrays.fill(bytes, (byte) 'x');
		return bytes;
	}

}
