package io.github.idempotent.benchmarks.size;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.IntSupplier;
import java.util.function.Function;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.idempotent.benchmarks.jmh.ResultCompressionBenchmark;
import io.github.idempotent.core.RecordedResponse;
import io.github.idempotent.core.RecordFormats;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.StoredResult;
import io.github.idempotent.store.redis.RedisIdempotencyStore;

/**
 * Bytes saved against microseconds spent, by size, for choosing
 * {@code idempotent.result-compression.threshold}. The responses are those of
 * {@link ResultCompressionBenchmark}: a {@code 201} with {@code Content-Type},
 * {@code Location} and a JSON body (the general layout, {@code H}), {@code size} bytes as
 * the threshold counts them, stored through the library's own
 * {@link RecordFormats#storing} and read back through
 * {@link RecordedResponse#read(StoredResult, long)}.
 * <p>
 * For each size: the stored bytes, encoded and deflated (exact); with
 * {@code redis=host:port}, the bytes per completed record in Redis ({@code MEMORY USAGE},
 * over {@code records=N} records per shape, default 200, written through the store's
 * claim and complete); and the CPU time of storing and of reading back, with and without
 * deflating. Times are the thread's own CPU time (not wall time, so that other processes
 * on a shared machine weigh less), per call, the median of {@code rounds=N} rounds
 * (default 15) of batches of about 20 ms in which the variants alternate, so that both
 * sides of a difference are measured under the same load. {@code cold} variants first
 * walk 1 MB of other memory, as a web request's own work does between two completions, so
 * that zlib's state (a deflater holds about 256 KB) is fetched from memory again; their
 * difference is the cost of deflating with that fetch, closer to what an application
 * pays. Prints Markdown tables.
 */
public final class CompressionThreshold {

	private static final int[] SIZES = { 200, 300, 400, 512, 768, 1024, 1536, 2048, 4096, 8192, 16384 };

	private static final long BATCH_NANOS = 20_000_000;

	private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

	private static final byte[] SCRUB = new byte[1024 * 1024];

	private static int sink;

	private CompressionThreshold() {
	}

	public static void main(String[] args) {
		String redis = null;
		int records = 200;
		int rounds = 15;
		for (String arg : args) {
			String value = arg.substring(arg.indexOf('=') + 1);
			if (arg.startsWith("redis=")) {
				redis = value;
			}
			else if (arg.startsWith("records=")) {
				records = Integer.parseInt(value);
			}
			else if (arg.startsWith("rounds=")) {
				rounds = Integer.parseInt(value);
			}
		}
		printSizes(redis, records);
		printTimes(rounds);
	}

	private static void printSizes(String redis, int records) {
		LettuceConnectionFactory factory = null;
		if (redis != null) {
			String[] hostPort = redis.split(":");
			factory = new LettuceConnectionFactory(
					new RedisStandaloneConfiguration(hostPort[0], Integer.parseInt(hostPort[1])));
			factory.afterPropertiesSet();
			factory.start();
		}
		try {
			System.out.println("| layout | size | stored, encoded | stored, deflated | saved | saved, % "
					+ "| Redis per record, encoded | Redis per record, deflated | saved in Redis, % |");
			System.out.println("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
			for (String layout : List.of("H", "J")) {
				for (int size : SIZES) {
					RecordedResponse response = layout.equals("H") ? ResultCompressionBenchmark.created(size)
							: ResultCompressionBenchmark.ok(size);
					StoredResult encoded = RecordFormats.storing(RecordFormats.NONE).apply(response);
					StoredResult deflated = RecordFormats.storing(0).apply(response);
					int saved = encoded.size() - deflated.size();
					String inRedis = "- | - | -";
					if (factory != null) {
						double plain = redisBytes(factory, encoded, records);
						double compressed = redisBytes(factory, deflated, records);
						inRedis = String.format(Locale.ROOT, "%.0f | %.0f | %.0f", plain, compressed,
								100 * (plain - compressed) / plain);
					}
					System.out.println(String.format(Locale.ROOT, "| %s | %d | %d | %d | %d | %.0f | %s |", layout,
							size, encoded.size(), deflated.size(), saved, 100.0 * saved / encoded.size(), inRedis));
				}
			}
			System.out.println();
		}
		finally {
			if (factory != null) {
				factory.destroy();
			}
		}
	}

	private static double redisBytes(LettuceConnectionFactory factory, StoredResult result, int records) {
		try (RedisConnection connection = factory.getConnection()) {
			List<RecordKey> keys = RecordSizes.write(new RedisIdempotencyStore(factory),
					new RecordSizes.Shape("", result, 0), records);
			long total = 0;
			for (RecordKey key : keys) {
				total += RecordSizes.memoryUsage(connection, key);
			}
			for (RecordKey key : keys) {
				connection.keyCommands().del(key.value().getBytes(StandardCharsets.UTF_8));
			}
			return (double) total / keys.size();
		}
	}

	private static void printTimes(int rounds) {
		Function<RecordedResponse, StoredResult> deflate = RecordFormats.storing(0);
		Function<RecordedResponse, StoredResult> none = RecordFormats.storing(RecordFormats.NONE);
		// Warm-up: every size and variant, until the JIT has compiled the paths.
		for (int pass = 0; pass < 3; pass++) {
			for (int size : SIZES) {
				for (IntSupplier variant : variants(ResultCompressionBenchmark.created(size), none, deflate)) {
					batch(variant, 2000);
				}
			}
		}
		System.out.println("CPU µs per call (median of " + rounds + " rounds; the difference is deflating's):");
		System.out.println();
		System.out.println("| size | saved | store, none | store, deflate | deflating, hot | replay, none "
				+ "| replay, deflate | inflating, hot | deflating, cold | inflating, cold | bytes saved per µs, hot |");
		System.out.println("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
		for (int size : SIZES) {
			RecordedResponse response = ResultCompressionBenchmark.created(size);
			List<IntSupplier> variants = variants(response, none, deflate);
			int[] repeat = new int[variants.size()];
			for (int i = 0; i < variants.size(); i++) {
				// Calls per batch: about BATCH_NANOS of CPU.
				double each = Math.max(batch(variants.get(i), 200), 50);
				repeat[i] = (int) Math.max(20, BATCH_NANOS / each);
			}
			double[][] perCall = new double[variants.size()][rounds];
			for (int round = 0; round < rounds; round++) {
				for (int i = 0; i < variants.size(); i++) {
					perCall[i][round] = batch(variants.get(i), repeat[i]);
				}
			}
			double[] median = new double[variants.size()];
			for (int i = 0; i < variants.size(); i++) {
				Arrays.sort(perCall[i]);
				median[i] = perCall[i][rounds / 2] / 1000;
			}
			int saved = none.apply(response).size() - deflate.apply(response).size();
			double deflating = median[1] - median[0];
			System.out.println(String.format(Locale.ROOT,
					"| %d | %d | %.1f | %.1f | **%.1f** | %.1f | %.1f | **%.1f** | %.1f | %.1f | %.0f |", size, saved,
					median[0], median[1], deflating, median[2], median[3], median[3] - median[2], median[5] - median[4],
					median[7] - median[6], saved / deflating));
		}
		System.out.println();
		System.out.println("(" + sink + ")");
	}

	/**
	 * Store and replay, none and deflated, hot then cold: the order of the table's
	 * columns.
	 */
	private static List<IntSupplier> variants(RecordedResponse response, Function<RecordedResponse, StoredResult> none,
			Function<RecordedResponse, StoredResult> deflate) {
		StoredResult plain = none.apply(response);
		StoredResult deflated = deflate.apply(response);
		IntSupplier storeNone = () -> none.apply(response).size();
		IntSupplier storeDeflate = () -> deflate.apply(response).size();
		IntSupplier replayNone = () -> RecordedResponse.read(plain, Integer.MAX_VALUE).body().length;
		IntSupplier replayDeflate = () -> RecordedResponse.read(deflated, Integer.MAX_VALUE).body().length;
		return List.of(storeNone, storeDeflate, replayNone, replayDeflate, cold(storeNone), cold(storeDeflate),
				cold(replayNone), cold(replayDeflate));
	}

	private static IntSupplier cold(IntSupplier call) {
		return () -> {
			byte[] memory = SCRUB;
			for (int i = 0; i < memory.length; i += 64) {
				memory[i]++;
			}
			return call.getAsInt();
		};
	}

	/**
	 * Runs {@code call} {@code times} times; the thread's CPU nanoseconds per call.
	 */
	private static double batch(IntSupplier call, int times) {
		int result = 0;
		long start = THREADS.getCurrentThreadCpuTime();
		for (int i = 0; i < times; i++) {
			result += call.getAsInt();
		}
		long cpu = THREADS.getCurrentThreadCpuTime() - start;
		sink += result;
		return (double) cpu / times;
	}

}
