package io.github.idempotent.testsupport;

import java.math.BigDecimal;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Bodies that a re-encoding would change (untyped amounts, text in a charset other than
 * UTF-8, bytes), each different from run to run, and the checks that a replay is byte for
 * byte the first response: shared by the Spring MVC and WebFlux tests.
 */
public final class ExactReplays {

	/** 2^53 + 1: the first long a double cannot hold. */
	public static final long BEYOND_DOUBLE = 9007199254740993L;

	private static final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	private ExactReplays() {
	}

	public static Map<String, Object> amounts(int run) {
		Map<String, Object> body = new LinkedHashMap<>();
		body.put("run", run);
		body.put("total", new BigDecimal("12345678901234567.89"));
		body.put("fee", new BigDecimal("10.00"));
		body.put("rate", new BigDecimal("0.10"));
		body.put("ledgerId", BEYOND_DOUBLE);
		return body;
	}

	public static String text(int run) {
		return "Grüße, Zahlung Nr. " + run + " über 10,00 EUR";
	}

	public static byte[] bytes(int run) {
		byte[] bytes = new byte[300];
		for (int i = 0; i < bytes.length; i++) {
			bytes[i] = (byte) (i * 31 + run);
		}
		return bytes;
	}

	public static HttpRequest.Builder post(int port, String path, String key) {
		return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
			.timeout(Duration.ofSeconds(20))
			.header("Content-Type", "application/json")
			.header("Idempotency-Key", key)
			.POST(HttpRequest.BodyPublishers.ofString("{\"orderNo\":\"E-1\",\"amount\":1}"));
	}

	public static HttpResponse<byte[]> send(HttpRequest request) throws Exception {
		return http.send(request, HttpResponse.BodyHandlers.ofByteArray());
	}

	/**
	 * Checks that {@code replay} is {@code first} replayed: same status, type, headers
	 * and bytes, marked as a replay, with the key echoed.
	 */
	public static void assertReplayOf(HttpResponse<byte[]> replay, HttpResponse<byte[]> first, String key) {
		assertThat(first.statusCode()).isBetween(200, 201);
		assertThat(replay.statusCode()).isEqualTo(first.statusCode());
		assertThat(replay.body()).isEqualTo(first.body());
		assertThat(replay.headers().firstValue("Content-Type")).isEqualTo(first.headers().firstValue("Content-Type"));
		assertThat(replay.headers().firstValue("X-Run")).isEqualTo(first.headers().firstValue("X-Run"));
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(replay.headers().firstValue("Idempotency-Key")).hasValue(key);
	}

	/**
	 * Checks that an untyped body kept its digits and scale.
	 */
	public static void assertExactAmounts(byte[] body) {
		assertThat(new String(body)).contains("\"total\":12345678901234567.89", "\"fee\":10.00", "\"rate\":0.10",
				"\"ledgerId\":" + BEYOND_DOUBLE);
	}

}
