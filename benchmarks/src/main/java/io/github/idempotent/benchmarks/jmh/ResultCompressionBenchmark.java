package io.github.idempotent.benchmarks.jmh;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

import io.github.idempotent.core.RecordedResponse;
import io.github.idempotent.core.RecordFormats;
import io.github.idempotent.store.StoredResult;

/**
 * What deflating a recorded HTTP response costs, by size, through the library's own code
 * path: {@link RecordFormats#storing} as a first call stores the response,
 * {@link RecordedResponse#read(StoredResult, long)} as a replay reads it. The response is
 * a {@code 201 Created} with its {@code Content-Type} and {@code Location} and a JSON
 * body (an order: ids, a timestamp, line items with their own ids), {@code size} bytes as
 * the threshold counts them (status, headers and body, the general layout).
 * {@code compression} is {@code none} or {@code deflate}, the latter with a threshold of
 * 0 so that every size is deflated: the cost of deflating is the difference between the
 * two, measured in the same run.
 * <p>
 * {@code cache}: {@code hot} repeats the same work in a tight loop, so zlib's state (a
 * deflater's window and hash tables, about 256 KB) stays in the CPU's caches;
 * {@code cold} first walks 1 MB of other memory, as a web request's own work does between
 * two completions, so that state is fetched again, which is closer to what a first call
 * pays in an application. Both variants of {@code compression} walk the same memory, so
 * the difference stays the cost of deflating.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class ResultCompressionBenchmark {

	/** The size of the recorded response, in bytes, before compression. */
	@Param({ "200", "300", "512", "1024", "2048", "4096", "8192", "16384" })
	public int size;

	@Param({ "none", "deflate" })
	public String compression;

	@Param({ "hot", "cold" })
	public String cache;

	private static final int SCRUB_BYTES = 1024 * 1024;

	private static final int CACHE_LINE = 64;

	private final byte[] scrub = new byte[SCRUB_BYTES];

	private RecordedResponse response;

	private Function<RecordedResponse, StoredResult> storing;

	private StoredResult stored;

	private boolean cold;

	@Setup
	public void setUp() {
		this.response = created(this.size);
		this.storing = RecordFormats.storing(this.compression.equals("deflate") ? 0 : RecordFormats.NONE);
		this.stored = this.storing.apply(this.response);
		this.cold = this.cache.equals("cold");
	}

	/** A first call's part: the response as it is stored. */
	@Benchmark
	public StoredResult store() {
		scrub();
		return this.storing.apply(this.response);
	}

	/** A replay's part: the stored response read back. */
	@Benchmark
	public RecordedResponse replay() {
		scrub();
		return RecordedResponse.read(this.stored, Integer.MAX_VALUE);
	}

	private void scrub() {
		if (this.cold) {
			byte[] memory = this.scrub;
			for (int i = 0; i < memory.length; i += CACHE_LINE) {
				memory[i]++;
			}
		}
	}

	/**
	 * A {@code 201 Created} as the web layer records it: {@code Content-Type},
	 * {@code Location} and a JSON body, whose status, headers and body take exactly
	 * {@code size} bytes in the general layout (the bytes the threshold is compared
	 * with), for a {@code size} of 150 or more.
	 */
	public static RecordedResponse created(int size) {
		String paymentId = "pay_" + hex(new Random(size), 16);
		Map<String, List<String>> headers = new LinkedHashMap<>();
		headers.put("Content-Type", List.of("application/json"));
		headers.put("Location", List.of("/payments/" + paymentId));
		RecordedResponse empty = new RecordedResponse(201, headers, new byte[0]);
		int head = RecordFormats.storing(RecordFormats.NONE).apply(empty).size() - 2;
		return new RecordedResponse(201, headers, orderJson(paymentId, size - head));
	}

	/**
	 * A {@code 200} JSON response with no other header, the compact layout, whose body
	 * (the bytes the threshold is compared with there) takes exactly {@code size} bytes.
	 */
	public static RecordedResponse ok(int size) {
		String paymentId = "pay_" + hex(new Random(size), 16);
		return new RecordedResponse(200, Map.of("Content-Type", List.of("application/json")),
				orderJson(paymentId, size));
	}

	private static final String[] PRODUCTS = { "Espresso beans, 1 kg", "Paper filters (100)", "Ceramic mug",
			"Milk frother", "Burr grinder", "Descaling tablets", "Travel tumbler", "Gift card" };

	private static final String[] NOTE_WORDS = { "leave", "at", "the", "door", "ring", "twice", "gift", "wrap",
			"please", "no", "invoice", "in", "box", "back", "entrance", "call", "on", "arrival" };

	/**
	 * An order as a REST API returns it, exactly {@code length} bytes of UTF-8 JSON (80
	 * or more): the payment's fields, then what fits of an order number, a customer, a
	 * timestamp and line items (each with an id of its own), then a delivery note that
	 * fills the rest. Random but reproducible: the same length gives the same bytes.
	 */
	static byte[] orderJson(String paymentId, int length) {
		Random random = new Random(31L * length);
		StringBuilder json = new StringBuilder().append("{\"paymentId\":\"")
			.append(paymentId)
			.append("\",\"status\":\"CAPTURED\",\"amountCents\":")
			.append(1000 + random.nextInt(90000))
			.append(",\"currency\":\"EUR\"");
		// Room kept for the note's own bytes and the closing brace.
		int room = length - 12;
		appendIfFits(json, ",\"orderNo\":\"A-" + (1000 + random.nextInt(9000)) + "\"", room);
		appendIfFits(json, ",\"customerId\":\"cus_" + hex(random, 12) + "\"", room);
		appendIfFits(json, String.format(Locale.ROOT, ",\"createdAt\":\"2026-12-05T%02d:%02d:%02d.%03dZ\"",
				random.nextInt(24), random.nextInt(60), random.nextInt(60), random.nextInt(1000)), room);
		if (json.length() + 12 < room) {
			json.append(",\"items\":[");
			boolean first = true;
			while (true) {
				String item = String.format(Locale.ROOT,
						"%s{\"lineId\":\"%s-%s-%s\",\"sku\":\"SKU-%05d\",\"name\":\"%s\",\"quantity\":%d,"
								+ "\"unitPriceCents\":%d}",
						first ? "" : ",", hex(random, 8), hex(random, 4), hex(random, 12), random.nextInt(100000),
						PRODUCTS[random.nextInt(PRODUCTS.length)], 1 + random.nextInt(5), 100 + random.nextInt(20000));
				if (json.length() + item.length() + 1 > room) {
					break;
				}
				json.append(item);
				first = false;
			}
			json.append(']');
		}
		json.append(",\"note\":\"");
		while (json.length() < length - 2) {
			String word = NOTE_WORDS[random.nextInt(NOTE_WORDS.length)];
			int left = length - 2 - json.length();
			json.append((word.length() + 1 <= left) ? word + " " : "x".repeat(left));
		}
		json.append("\"}");
		byte[] bytes = json.toString().getBytes(StandardCharsets.UTF_8);
		if (bytes.length != length) {
			throw new IllegalArgumentException("No order of " + length + " bytes (" + bytes.length + ")");
		}
		return bytes;
	}

	private static void appendIfFits(StringBuilder json, String field, int room) {
		if (json.length() + field.length() <= room) {
			json.append(field);
		}
	}

	private static String hex(Random random, int digits) {
		StringBuilder hex = new StringBuilder(digits);
		for (int i = 0; i < digits; i++) {
			hex.append(Character.forDigit(random.nextInt(16), 16));
		}
		return hex.toString();
	}

}
