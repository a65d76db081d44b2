package io.github.idempotent.benchmarks.size;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;
import java.util.function.UnaryOperator;

import javax.sql.DataSource;

import io.lettuce.core.api.async.RedisServerAsyncCommands;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

import io.github.idempotent.core.RecordedResponse;
import io.github.idempotent.core.RecordFormats;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.StoredResult;
import io.github.idempotent.store.jdbc.JdbcDialect;
import io.github.idempotent.store.jdbc.JdbcIdempotencyStore;
import io.github.idempotent.store.redis.RedisIdempotencyStore;

/**
 * Bytes per idempotency record, as the stores keep them: Redis {@code MEMORY USAGE} of
 * each record's key (key and value, with Redis's own overhead), PostgreSQL
 * {@code pg_column_size} of each row plus its share of the primary-key index, MariaDB's
 * data and index length per row. Shapes: a record in progress, a completed record with a
 * 20-byte result, and ones with a 2 KB and a 10 KB JSON result (an order with line
 * items), each stored as encoded and deflated above 256 bytes, the default threshold of
 * {@code idempotent.result-compression} when the published tables were measured (1 KB
 * since; the same compression the executor applies); and the response of an HTTP handler
 * ({@code 201}, {@code Content-Type}, {@code Location}, the 20-byte and the 2 KB body) as
 * the web layer records it ({@code H}) and as the executor stored a typed
 * {@code ResponseEntity} before ({@code V}); and the response of a
 * {@code @RestController} method returning a record ({@code 200}, JSON, no other header;
 * a 108-byte and a 2 KB body), recorded in the compact layout ({@code J}) and as its
 * typed value was stored before ({@code V}, {@code Z}). Keys have the default shape:
 * prefix, global scope, the default operation name of a controller method and a UUID.
 * <p>
 * Writes through the stores' own primitives (claim, complete), so a change of the record
 * layout is measured as it is. Prints a Markdown table.
 * <p>
 * Arguments: {@code redis=host:port}, {@code postgresql=jdbcUrl},
 * {@code mariadb=jdbcUrl}, {@code records=N} (per shape, default 1000); each store is
 * measured only when named.
 */
public final class RecordSizes {

	static final String OPERATION = "com.shop.checkout.PaymentController#pay(com.shop.checkout.PaymentRequest)";

	private RecordSizes() {
	}

	public static void main(String[] args) throws Exception {
		String redis = null;
		String postgresql = null;
		String mariadb = null;
		int records = 1000;
		for (String arg : args) {
			String value = arg.substring(arg.indexOf('=') + 1);
			if (arg.startsWith("redis=")) {
				redis = value;
			}
			else if (arg.startsWith("postgresql=")) {
				postgresql = value;
			}
			else if (arg.startsWith("mariadb=")) {
				mariadb = value;
			}
			else if (arg.startsWith("records=")) {
				records = Integer.parseInt(value);
			}
		}
		Function<RecordedResponse, StoredResult> deflate = RecordFormats.storing(256);
		UnaryOperator<StoredResult> deflateValue = RecordFormats.compressingValues(256);
		Function<RecordedResponse, StoredResult> none = RecordFormats.storing(RecordFormats.NONE);
		String small = "{\"id\":\"pay_12345\"}";
		String twoKbJson = orderJson(18);
		StoredResult twoKb = result(twoKbJson);
		StoredResult tenKb = result(orderJson(95));
		StoredResult typedSmall = result(typedResponseJson("pay_12345", small));
		StoredResult typedTwoKb = result(typedResponseJson("pay_5b1d0c", twoKbJson));
		RecordedResponse recordedSmall = recordedResponse("pay_12345", small);
		RecordedResponse recordedTwoKb = recordedResponse("pay_5b1d0c", twoKbJson);
		// The /first endpoint's own response (run-http.sh): a Receipt, 201 and its
		// Location.
		String receipt = "{\"paymentId\":\"pay_5b1d0c8e2f4a7b31\",\"orderNo\":\"A-1042\",\"customerId\":\"c-42\","
				+ "\"amountCents\":1999,\"currency\":\"EUR\",\"feeCents\":57,\"status\":\"CAPTURED\","
				+ "\"createdAt\":\"2026-12-03T18:12:13.528683159Z\"}";
		StoredResult typedReceipt = result(typedResponseJson("pay_5b1d0c8e2f4a7b31", receipt));
		RecordedResponse recordedReceipt = recordedResponse("pay_5b1d0c8e2f4a7b31", receipt);
		StoredResult recordedTwoKbEncoded = none.apply(recordedTwoKb);
		// A @RestController method returning a record: 200, application/json, no other
		// header; typed, the value alone was stored (V, deflated above the threshold as
		// Z).
		String record = "{\"paymentId\":\"pay_5b1d0c8e2f4a7b31\",\"orderNo\":\"A-10420\",\"amountCents\":1999,"
				+ "\"currency\":\"EUR\",\"status\":\"PAID\"}";
		StoredResult typedRecord = result(record);
		RecordedResponse recordedRecord = jsonResponse(record);
		RecordedResponse recordedTwoKbRecord = jsonResponse(twoKbJson);
		List<Shape> shapes = List.of(new Shape("in progress", null, 0),
				new Shape("completed, 20-byte result", result(small), 0),
				new Shape("completed, 2 KB JSON result, uncompressed", twoKb, 0),
				new Shape("completed, 2 KB JSON result, deflated", deflateValue.apply(twoKb), twoKb.size()),
				new Shape("completed, 10 KB JSON result, uncompressed", tenKb, 0),
				new Shape("completed, 10 KB JSON result, deflated", deflateValue.apply(tenKb), tenKb.size()),
				new Shape("HTTP 201, 20-byte body, typed ResponseEntity (V, before)", typedSmall, 0),
				new Shape("HTTP 201, 20-byte body, recorded response (H)", none.apply(recordedSmall), 0),
				new Shape("HTTP 201, /first's receipt body, typed ResponseEntity (V, before), deflated",
						deflateValue.apply(typedReceipt), typedReceipt.size()),
				new Shape("HTTP 201, /first's receipt body, recorded response (H)", deflate.apply(recordedReceipt), 0),
				new Shape("HTTP 201, 2 KB body, typed ResponseEntity (V, before), deflated",
						deflateValue.apply(typedTwoKb), typedTwoKb.size()),
				new Shape("HTTP 201, 2 KB body, recorded response (H), uncompressed", recordedTwoKbEncoded, 0),
				new Shape("HTTP 201, 2 KB body, recorded response (H), deflated", deflate.apply(recordedTwoKb),
						recordedTwoKbEncoded.size()),
				new Shape("HTTP 200, " + record.length() + "-byte JSON record, typed value (V, before)",
						deflateValue.apply(typedRecord), 0),
				new Shape("HTTP 200, " + record.length() + "-byte JSON record, recorded response (J, compact)",
						deflate.apply(recordedRecord), 0),
				new Shape("HTTP 200, 2 KB JSON record, typed value (V, before), deflated", deflateValue.apply(twoKb),
						twoKb.size()),
				new Shape("HTTP 200, 2 KB JSON record, recorded response (J, compact), deflated",
						deflate.apply(recordedTwoKbRecord), none.apply(recordedTwoKbRecord).size()));
		System.out.println("| store | record | bytes per record | of which stored result (encoded) | records |");
		System.out.println("|---|---|---:|---:|---:|");
		if (redis != null) {
			measureRedis(redis, shapes, records);
		}
		if (postgresql != null) {
			measureJdbc("PostgreSQL", postgresql, shapes, records);
		}
		if (mariadb != null) {
			measureJdbc("MariaDB", mariadb, shapes, records);
		}
	}

	private static void measureRedis(String address, List<Shape> shapes, int records) {
		String[] hostPort = address.split(":");
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(hostPort[0], Integer.parseInt(hostPort[1])));
		factory.afterPropertiesSet();
		factory.start();
		try (RedisConnection connection = factory.getConnection()) {
			RedisIdempotencyStore store = new RedisIdempotencyStore(factory);
			for (Shape shape : shapes) {
				List<RecordKey> keys = write(store, shape, records);
				long total = 0;
				for (RecordKey key : keys) {
					total += memoryUsage(connection, key);
				}
				print("Redis", shape, (double) total / keys.size(), records);
				for (RecordKey key : keys) {
					connection.keyCommands().del(key.value().getBytes(StandardCharsets.UTF_8));
				}
			}
		}
		finally {
			factory.destroy();
		}
	}

	@SuppressWarnings("unchecked")
	static long memoryUsage(RedisConnection connection, RecordKey key) {
		// Spring Data Redis has no MEMORY USAGE; Lettuce does.
		RedisServerAsyncCommands<byte[], byte[]> commands = (RedisServerAsyncCommands<byte[], byte[]>) connection
			.getNativeConnection();
		try {
			return commands.memoryUsage(key.value().getBytes(StandardCharsets.UTF_8)).get();
		}
		catch (Exception ex) {
			throw new IllegalStateException("MEMORY USAGE failed for " + key, ex);
		}
	}

	private static void measureJdbc(String database, String url, List<Shape> shapes, int records) {
		DataSource dataSource = new DriverManagerDataSource(url);
		JdbcTemplate jdbc = new JdbcTemplate(dataSource);
		JdbcDialect dialect = database.equals("PostgreSQL") ? JdbcDialect.POSTGRESQL : JdbcDialect.MYSQL;
		for (Shape shape : shapes) {
			// A table of its own per shape: an index never shrinks, so a table reused
			// would count the pages of the shape before.
			String table = "idem_sizes_" + UUID.randomUUID().toString().substring(0, 8);
			createTable(jdbc, dialect, table);
			try {
				write(new JdbcIdempotencyStore(dataSource, table, dialect), shape, records);
				double bytes = (dialect == JdbcDialect.POSTGRESQL) ? postgresqlBytesPerRow(jdbc, table)
						: mariadbBytesPerRow(jdbc, table);
				print(database, shape, bytes, records);
			}
			finally {
				jdbc.execute("DROP TABLE " + table);
			}
		}
	}

	/**
	 * Creates {@code table} by the store's own schema script.
	 */
	static void createTable(JdbcTemplate jdbc, JdbcDialect dialect, String table) {
		for (String statement : dialect.schema(table).split(";")) {
			String sql = statement.lines().filter((line) -> !line.startsWith("--")).reduce("", (a, b) -> a + "\n" + b);
			if (!sql.isBlank()) {
				jdbc.execute(sql);
			}
		}
	}

	private static double postgresqlBytesPerRow(JdbcTemplate jdbc, String table) {
		jdbc.execute("VACUUM ANALYZE " + table);
		Double row = jdbc.queryForObject("SELECT avg(pg_column_size(t.*)) FROM " + table + " t", Double.class);
		Long index = jdbc.queryForObject("SELECT pg_indexes_size('" + table + "')", Long.class);
		Long count = jdbc.queryForObject("SELECT count(*) FROM " + table, Long.class);
		// Row: tuple header and data as stored (TOAST-compressed when large); plus a
		// 4-byte line pointer, and the row's share of the indexes.
		return row + 4 + (double) index / count;
	}

	private static double mariadbBytesPerRow(JdbcTemplate jdbc, String table) {
		jdbc.execute("ANALYZE TABLE " + table);
		// TABLE_ROWS is InnoDB's estimate, off by tens of percent on small tables: divide
		// by the real count.
		Long length = jdbc.queryForObject("SELECT DATA_LENGTH + INDEX_LENGTH FROM information_schema.TABLES "
				+ "WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?", Long.class, table);
		Long count = jdbc.queryForObject("SELECT count(*) FROM " + table, Long.class);
		return (length != null && count != null && count > 0) ? (double) length / count : Double.NaN;
	}

	static List<RecordKey> write(IdempotencyStore store, Shape shape, int records) {
		List<RecordKey> keys = new ArrayList<>(records);
		Fingerprint fingerprint = new Fingerprint("q4kX1c0QwS6R8jVx2mJ0b3n7Zt5yHc9LpA1eD4fG6hI");
		for (int i = 0; i < records; i++) {
			RecordKey key = RecordKey.of("idempotent", "_", OPERATION, UUID.randomUUID().toString(),
					store.maxKeyLength());
			ClaimResult claim = store.claim(key, fingerprint, Duration.ofMinutes(10));
			String token = ((ClaimResult.Acquired) claim).token();
			if (shape.result() != null) {
				store.complete(key, token, fingerprint, shape.result(), Duration.ofHours(24));
			}
			keys.add(key);
		}
		return keys;
	}

	private static void print(String store, Shape shape, double bytes, int records) {
		int result = (shape.result() != null) ? shape.result().size() : 0;
		String encoded = (shape.encodedSize() > 0) ? " (" + shape.encodedSize() + ")" : "";
		System.out.println(String.format(Locale.ROOT, "| %s | %s | %.0f | %d%s | %d |", store, shape.name(), bytes,
				result, encoded, records));
	}

	/**
	 * A stored value result as the executor writes it: a marker byte, then the JSON.
	 */
	private static StoredResult result(String json) {
		byte[] utf8 = json.getBytes(StandardCharsets.UTF_8);
		byte[] bytes = new byte[utf8.length + 1];
		bytes[0] = 'V';
		System.arraycopy(utf8, 0, bytes, 1, utf8.length);
		return new StoredResult(bytes);
	}

	/**
	 * What the executor stored for a {@code ResponseEntity} before responses were
	 * recorded as written: the entity's status, its end-to-end headers (the
	 * {@code Location} a {@code /first}-style endpoint sets; the {@code Content-Type} was
	 * not part of the entity) and its body, as JSON behind the {@code V} marker.
	 */
	private static String typedResponseJson(String paymentId, String body) {
		return "{\"status\":201,\"headers\":{\"Location\":[\"/payments/" + paymentId + "\"]},\"body\":" + body + "}";
	}

	/**
	 * What the web layer records for the response of a {@code /first}-style endpoint:
	 * {@code 201 Created}, its {@code Content-Type} and {@code Location}, and the body as
	 * written.
	 */
	private static RecordedResponse recordedResponse(String paymentId, String body) {
		Map<String, List<String>> headers = new LinkedHashMap<>();
		headers.put("Content-Type", List.of("application/json"));
		headers.put("Location", List.of("/payments/" + paymentId));
		return new RecordedResponse(201, headers, body.getBytes(StandardCharsets.UTF_8));
	}

	/**
	 * What the web layer records for a {@code @RestController} method that returns a
	 * record: {@code 200 OK}, the {@code Content-Type} Spring's JSON converter writes,
	 * and the body.
	 */
	static RecordedResponse jsonResponse(String body) {
		return new RecordedResponse(200, Map.of("Content-Type", List.of("application/json")),
				body.getBytes(StandardCharsets.UTF_8));
	}

	/**
	 * An order as JSON, with customer, address and line items: about 2 KB with 18 items,
	 * 10 KB with 95.
	 */
	static String orderJson(int items) {
		StringBuilder json = new StringBuilder("{\"orderNo\":\"ORD-2026-000123\",\"status\":\"PAID\",")
			.append("\"customer\":{\"id\":\"cus_8f2a61\",\"name\":\"Alice Example\",\"email\":\"alice@example.com\"},")
			.append("\"shipping\":{\"street\":\"1 Main Street\",\"city\":\"Springfield\",\"zip\":\"12345\",")
			.append("\"country\":\"US\"},\"items\":[");
		for (int i = 1; i <= items; i++) {
			json.append((i > 1) ? "," : "")
				.append("{\"sku\":\"SKU-")
				.append(1000 + i)
				.append("\",\"name\":\"Item number ")
				.append(i)
				.append(" of the order\",\"quantity\":")
				.append(i % 3 + 1)
				.append(",\"unitPrice\":")
				.append(1999 + i)
				.append(",\"currency\":\"USD\"}");
		}
		return json.append("],\"total\":123456,\"currency\":\"USD\",\"paymentId\":\"pay_5b1d0c\",")
			.append("\"createdAt\":\"2026-12-02T10:15:30Z\"}")
			.toString();
	}

	/**
	 * A record to write: its stored result (null: in progress) and, when that is
	 * compressed, the size it was encoded at.
	 */
	record Shape(String name, StoredResult result, int encodedSize) {
	}

}
