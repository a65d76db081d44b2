package io.github.idempotent.benchmarks.size;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;
import java.util.function.Function;

import com.zaxxer.hikari.HikariDataSource;
import io.lettuce.core.api.async.RedisServerAsyncCommands;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.RedisStringCommands.SetOption;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.types.Expiration;
import org.springframework.jdbc.core.JdbcTemplate;

import io.github.idempotent.core.RecordFormats;
import io.github.idempotent.core.RecordedResponse;
import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.InspectableIdempotencyStore;
import io.github.idempotent.store.InspectableIdempotencyStore.InProgressPage;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.StoredResult;
import io.github.idempotent.store.jdbc.JdbcDialect;
import io.github.idempotent.store.jdbc.JdbcIdempotencyPurger;
import io.github.idempotent.store.jdbc.JdbcIdempotencyStore;
import io.github.idempotent.store.redis.RedisIdempotencyStore;

/**
 * A million completed records, measured: Redis {@code used_memory} per record against
 * {@code MEMORY USAGE}; PostgreSQL table and index bytes per row; the JDBC purge of a
 * million expired rows, with the latency of concurrent first calls and replays during it
 * against the same load without it; and the time of the Actuator listing of records in
 * progress (one page, and every page) with a million records present.
 * <p>
 * One record per shape is written through the store's own {@code claim} and
 * {@code complete}; the others are copies of its bytes under other keys of the same shape
 * (Redis: pipelined {@code SET PX}; PostgreSQL: inserted as the claim does, in progress,
 * then updated as the completion does, 10 000 rows per statement). Shapes: the response
 * of a {@code @RestController} method returning a 108-byte JSON record, and one returning
 * a 2 KB JSON record, recorded as the web layer records them (deflated above 256 B).
 * <p>
 * Arguments: {@code redis=host:port}, {@code postgresql=jdbcUrl} (a database of its own:
 * the table {@code idempotency_record} is created and dropped), {@code records=N}
 * (default 1 000 000), {@code shapes=small,2kb}, {@code load=seconds} (of the load
 * without the purge, default 20), {@code threads=N} (of that load, default 4).
 */
public final class MillionRecords {

	private static final int CHUNK = 10_000;

	private static final Fingerprint FINGERPRINT = new Fingerprint("q4kX1c0QwS6R8jVx2mJ0b3n7Zt5yHc9LpA1eD4fG6hI");

	private MillionRecords() {
	}

	public static void main(String[] args) throws Exception {
		String redis = null;
		String postgresql = null;
		int records = 1_000_000;
		List<String> shapeNames = List.of("small", "2kb");
		int loadSeconds = 20;
		int threads = 4;
		for (String arg : args) {
			String value = arg.substring(arg.indexOf('=') + 1);
			if (arg.startsWith("redis=")) {
				redis = value;
			}
			else if (arg.startsWith("postgresql=")) {
				postgresql = value;
			}
			else if (arg.startsWith("records=")) {
				records = Integer.parseInt(value);
			}
			else if (arg.startsWith("shapes=")) {
				shapeNames = List.of(value.split(","));
			}
			else if (arg.startsWith("load=")) {
				loadSeconds = Integer.parseInt(value);
			}
			else if (arg.startsWith("threads=")) {
				threads = Integer.parseInt(value);
			}
		}
		Function<RecordedResponse, StoredResult> deflate = RecordFormats.storing(256);
		String record = "{\"paymentId\":\"pay_5b1d0c8e2f4a7b31\",\"orderNo\":\"A-10420\",\"amountCents\":1999,"
				+ "\"currency\":\"EUR\",\"status\":\"PAID\"}";
		List<Shape> shapes = new ArrayList<>();
		for (String name : shapeNames) {
			String json = name.equals("small") ? record : RecordSizes.orderJson(18);
			String label = name.equals("small") ? record.length() + "-byte JSON record" : "2 KB JSON record, deflated";
			shapes.add(new Shape(label, deflate.apply(RecordSizes.jsonResponse(json))));
		}
		if (redis != null && !redis.isEmpty()) {
			for (Shape shape : shapes) {
				measureRedis(redis, shape, records);
			}
		}
		if (postgresql != null && !postgresql.isEmpty()) {
			for (int i = 0; i < shapes.size(); i++) {
				measurePostgresql(postgresql, shapes.get(i), records, (i == 0) ? loadSeconds : 0, threads);
			}
		}
	}

	private static void measureRedis(String address, Shape shape, int records) throws Exception {
		String[] hostPort = address.split(":");
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(hostPort[0], Integer.parseInt(hostPort[1])));
		factory.afterPropertiesSet();
		factory.start();
		try (RedisConnection connection = factory.getConnection()) {
			connection.serverCommands().flushAll();
			RedisIdempotencyStore store = new RedisIdempotencyStore(factory);
			long before = usedMemory(connection);
			RecordKey template = write(store, shape.result());
			byte[] templateKey = template.value().getBytes(StandardCharsets.UTF_8);
			byte[] value = connection.stringCommands().get(templateKey);
			long pttl = connection.keyCommands().pTtl(templateKey);
			String keyPrefix = template.value().substring(0, template.value().length() - 36);
			long start = System.nanoTime();
			for (int done = 1; done < records; done += CHUNK) {
				connection.openPipeline();
				for (int i = done; i < Math.min(records, done + CHUNK); i++) {
					connection.stringCommands()
						.set((keyPrefix + UUID.randomUUID()).getBytes(StandardCharsets.UTF_8), value,
								Expiration.milliseconds(pttl), SetOption.upsert());
				}
				connection.closePipeline();
			}
			long loadMillis = (System.nanoTime() - start) / 1_000_000;
			long after = usedMemory(connection);
			Long keys = connection.serverCommands().dbSize();
			long sampled = 0;
			int samples = 1000;
			for (int i = 0; i < samples; i++) {
				sampled += memoryUsage(connection, connection.keyCommands().randomKey());
			}
			System.out.println(String.format(Locale.ROOT,
					"Redis | %s | %d keys (value %d B) loaded in %d ms | used_memory %d -> %d B: %.0f B per record | "
							+ "MEMORY USAGE of %d random keys: %.0f B | %s",
					shape.name(), keys, value.length, loadMillis, before, after, (double) (after - before) / keys,
					samples, (double) sampled / samples, loadAverage()));
			// The Actuator listing: ten calls in progress among the million.
			for (int i = 0; i < 10; i++) {
				store.claim(key(store), FINGERPRINT, Duration.ofMinutes(10));
			}
			listAll(store, "Redis", shape);
			connection.serverCommands().flushAll();
		}
		finally {
			factory.destroy();
		}
	}

	private static void listAll(InspectableIdempotencyStore store, String name, Shape shape) {
		for (int limit : new int[] { 100, 1000 }) {
			long start = System.nanoTime();
			InProgressPage first = store.findInProgress("idempotent", Duration.ZERO, null, limit);
			long firstMicros = (System.nanoTime() - start) / 1000;
			int pages = 1;
			int found = first.records().size();
			String cursor = first.cursor();
			// Every page only at the larger limit: at 100, a million Redis keys are ten
			// thousand pages.
			while (cursor != null && limit == 1000) {
				InProgressPage page = store.findInProgress("idempotent", Duration.ZERO, cursor, limit);
				pages++;
				found += page.records().size();
				cursor = page.cursor();
			}
			long allMillis = (System.nanoTime() - start) / 1_000_000;
			System.out.println(String.format(Locale.ROOT,
					"%s | %s | listing in progress, limit %d: first page %.1f ms (%d found), every page %d ms "
							+ "(%d pages, %d found) | %s",
					name, shape.name(), limit, firstMicros / 1000.0, first.records().size(), allMillis, pages, found,
					loadAverage()));
		}
	}

	private static void measurePostgresql(String url, Shape shape, int records, int loadSeconds, int threads)
			throws Exception {
		HikariDataSource dataSource = new HikariDataSource();
		dataSource.setJdbcUrl(url);
		dataSource.setMaximumPoolSize(threads + 4);
		JdbcTemplate jdbc = new JdbcTemplate(dataSource);
		String table = "idempotency_record";
		jdbc.execute("DROP TABLE IF EXISTS " + table);
		RecordSizes.createTable(jdbc, JdbcDialect.POSTGRESQL, table);
		try {
			JdbcIdempotencyStore store = new JdbcIdempotencyStore(dataSource, table, JdbcDialect.POSTGRESQL);
			RecordKey template = write(store, shape.result());
			String keyPrefix = template.value().substring(0, template.value().length() - 36);
			long start = System.nanoTime();
			for (int done = 1; done < records; done += CHUNK) {
				int n = Math.min(CHUNK, records - done);
				// As the claim inserts them, then as the completion updates them: each
				// row leaves the version and index entries a real one leaves.
				jdbc.update("CREATE TEMP TABLE IF NOT EXISTS chunk (k VARCHAR(512))");
				jdbc.update("TRUNCATE chunk");
				jdbc.update("INSERT INTO " + table
						+ " (idempotency_key, state, owner_token, fingerprint, expires_at) SELECT ? || gen_random_uuid(), "
						+ "'P', owner_token, fingerprint, clock_timestamp() + interval '10 minutes' FROM " + table
						+ ", generate_series(1, ?) WHERE idempotency_key = ?", keyPrefix, n, template.value());
				// Expiry spread over the TTL, as for the rows alive in a running store:
				// identical values would let the index deduplicate them.
				jdbc.update("UPDATE " + table + " t SET state = 'C', result = s.result, "
						+ "expires_at = statement_timestamp() + random() * interval '24 hours' FROM " + table
						+ " s WHERE s.idempotency_key = ? AND t.state = 'P'", template.value());
				if ((done / CHUNK) % 10 == 9) {
					jdbc.execute("VACUUM " + table);
				}
			}
			long loadMillis = (System.nanoTime() - start) / 1_000_000;
			jdbc.execute("VACUUM ANALYZE " + table);
			long count = jdbc.queryForObject("SELECT count(*) FROM " + table, Long.class);
			long heap = jdbc.queryForObject("SELECT pg_table_size('" + table + "')", Long.class);
			long pk = jdbc.queryForObject("SELECT pg_relation_size('" + table + "_pk')", Long.class);
			long expiresIdx = jdbc.queryForObject("SELECT pg_relation_size('" + table + "_expires_at_idx')",
					Long.class);
			long inProgressIdx = jdbc.queryForObject("SELECT pg_relation_size('" + table + "_in_progress_idx')",
					Long.class);
			long total = jdbc.queryForObject("SELECT pg_total_relation_size('" + table + "')", Long.class);
			System.out.println(String.format(Locale.ROOT,
					"PostgreSQL | %s | %d rows loaded in %d ms | total %d B: %.0f B per row (table with TOAST %.0f, "
							+ "primary key %.0f, expires_at index %.0f, in-progress index %d B in all) | %s",
					shape.name(), count, loadMillis, total, (double) total / count, (double) heap / count,
					(double) pk / count, (double) expiresIdx / count, inProgressIdx, loadAverage()));
			for (int i = 0; i < 10; i++) {
				store.claim(key(store), FINGERPRINT, Duration.ofMinutes(10));
			}
			listAll(store, "PostgreSQL", shape);
			if (loadSeconds > 0) {
				purge(jdbc, store, table, shape, loadSeconds, threads);
			}
		}
		finally {
			jdbc.execute("DROP TABLE IF EXISTS " + table);
			dataSource.close();
		}
	}

	private static void purge(JdbcTemplate jdbc, JdbcIdempotencyStore store, String table, Shape shape, int loadSeconds,
			int threads) throws Exception {
		int expired = jdbc
			.update("UPDATE " + table + " SET expires_at = expires_at - interval '25 hours' WHERE state = 'C'");
		jdbc.execute("VACUUM ANALYZE " + table);
		Load load = new Load(store, shape.result(), threads);
		load.start();
		Thread.sleep(2000); // warm-up
		load.reset();
		Thread.sleep(loadSeconds * 1000L);
		Latencies without = load.reset();
		int batchSize = 1000;
		JdbcIdempotencyPurger purger = new JdbcIdempotencyPurger(store, Duration.ofMinutes(5), batchSize);
		long start = System.nanoTime();
		int deleted = purger.purge();
		long purgeMillis = (System.nanoTime() - start) / 1_000_000;
		Latencies during = load.reset();
		load.stop();
		System.out.println(String.format(Locale.ROOT,
				"PostgreSQL | purge of %d expired rows: %d deleted in %d ms, %d batches of %d (%.1f ms per batch) | %s",
				expired, deleted, purgeMillis, deleted / batchSize + 1, batchSize,
				(double) purgeMillis / (deleted / batchSize + 1), loadAverage()));
		System.out.println("PostgreSQL | " + threads + " threads of first calls and replays, without the purge ("
				+ loadSeconds + " s): " + without);
		System.out.println("PostgreSQL | the same load during the purge (" + purgeMillis / 1000 + " s): " + during);
	}

	private static RecordKey key(IdempotencyStore store) {
		return RecordKey.of("idempotent", "_", RecordSizes.OPERATION, UUID.randomUUID().toString(),
				store.maxKeyLength());
	}

	private static RecordKey write(IdempotencyStore store, StoredResult result) {
		RecordKey key = key(store);
		String token = ((ClaimResult.Acquired) store.claim(key, FINGERPRINT, Duration.ofMinutes(10))).token();
		store.complete(key, token, FINGERPRINT, result, Duration.ofHours(24));
		return key;
	}

	private static long usedMemory(RedisConnection connection) {
		Properties info = connection.serverCommands().info("memory");
		return Long.parseLong(info.getProperty("used_memory"));
	}

	@SuppressWarnings("unchecked")
	private static long memoryUsage(RedisConnection connection, byte[] key) throws Exception {
		return ((RedisServerAsyncCommands<byte[], byte[]>) connection.getNativeConnection()).memoryUsage(key).get();
	}

	private static String loadAverage() {
		try {
			String[] parts = java.nio.file.Files.readString(java.nio.file.Path.of("/proc/loadavg")).split(" ");
			return "load average " + parts[0] + " " + parts[1] + " " + parts[2];
		}
		catch (Exception ex) {
			return "load average unknown";
		}
	}

	/**
	 * Threads that each alternate a first call (claim and complete of a new key) and a
	 * replay (claim of a key it completed), recording both latencies.
	 */
	private static final class Load {

		private final IdempotencyStore store;

		private final StoredResult result;

		private final List<Thread> threads = new ArrayList<>();

		private final AtomicBoolean running = new AtomicBoolean(true);

		private volatile Latencies current = new Latencies();

		Load(IdempotencyStore store, StoredResult result, int threads) {
			this.store = store;
			this.result = result;
			for (int i = 0; i < threads; i++) {
				this.threads.add(new Thread(this::run, "load-" + i));
			}
		}

		void start() {
			this.threads.forEach(Thread::start);
		}

		Latencies reset() {
			Latencies previous = this.current;
			this.current = new Latencies();
			return previous;
		}

		void stop() throws InterruptedException {
			this.running.set(false);
			for (Thread thread : this.threads) {
				thread.join();
			}
		}

		private void run() {
			List<RecordKey> completed = new ArrayList<>();
			while (this.running.get()) {
				Latencies latencies = this.current;
				long start = System.nanoTime();
				completed.add(write(this.store, this.result));
				long first = System.nanoTime() - start;
				RecordKey replayed = completed.get(ThreadLocalRandom.current().nextInt(completed.size()));
				start = System.nanoTime();
				ClaimResult claim = this.store.claim(replayed, FINGERPRINT, Duration.ofMinutes(10));
				long replay = System.nanoTime() - start;
				if (!(claim instanceof ClaimResult.Completed)) {
					throw new IllegalStateException("Not a replay: " + claim);
				}
				latencies.add(first, replay);
			}
		}

	}

	/**
	 * Latencies of first calls and replays, in nanoseconds.
	 */
	private static final class Latencies {

		private long[] first = new long[1 << 16];

		private long[] replay = new long[1 << 16];

		private int size;

		synchronized void add(long firstNanos, long replayNanos) {
			if (this.size == this.first.length) {
				this.first = Arrays.copyOf(this.first, this.size * 2);
				this.replay = Arrays.copyOf(this.replay, this.size * 2);
			}
			this.first[this.size] = firstNanos;
			this.replay[this.size++] = replayNanos;
		}

		@Override
		public synchronized String toString() {
			return String.format(Locale.ROOT, "%d pairs; first call (claim + complete) %s; replay (claim) %s",
					this.size, percentiles(Arrays.copyOf(this.first, this.size)),
					percentiles(Arrays.copyOf(this.replay, this.size)));
		}

		private static String percentiles(long[] nanos) {
			if (nanos.length == 0) {
				return "none";
			}
			Arrays.sort(nanos);
			LongSupplier p50 = () -> nanos[(int) (nanos.length * 0.50)];
			return String.format(Locale.ROOT, "p50 %.2f ms, p99 %.2f ms, max %.2f ms", p50.getAsLong() / 1e6,
					nanos[Math.min(nanos.length - 1, (int) (nanos.length * 0.99))] / 1e6,
					nanos[nanos.length - 1] / 1e6);
		}

	}

	/**
	 * A record to write: its name and its stored result.
	 */
	private record Shape(String name, StoredResult result) {
	}

}
