package io.github.idempotent.web;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.ToIntFunction;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A storm of concurrent duplicates against running instances of an application: every
 * call of each key sent at once (spread over the instances), then each key asked again
 * once all have answered, and what a client must have seen: the method ran once per key
 * by a ledger outside the store, every success is the first answer or its identical
 * replay, and every other answer is 409 with {@code Retry-After} (no 500, no 503).
 */
final class HttpStorm {

	private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	private final String path;

	private final int[] ports;

	HttpStorm(String path, int... ports) {
		this.path = path;
		this.ports = ports;
	}

	/**
	 * Sends {@code callsPerKey} concurrent POSTs of {@code body} for each of {@code keys}
	 * new keys, then {@code retries} more of each key one after the other.
	 * @return the answers by key
	 */
	Map<String, List<HttpResponse<String>>> run(int keys, int callsPerKey, int retries, String body) throws Exception {
		Map<String, List<Future<HttpResponse<String>>>> calls = new LinkedHashMap<>();
		ExecutorService pool = Executors.newFixedThreadPool(keys * callsPerKey);
		Map<String, List<HttpResponse<String>>> answers = new LinkedHashMap<>();
		try {
			CountDownLatch start = new CountDownLatch(1);
			for (int k = 0; k < keys; k++) {
				String key = UUID.randomUUID().toString();
				List<Future<HttpResponse<String>>> sent = new ArrayList<>();
				for (int i = 0; i < callsPerKey; i++) {
					int port = this.ports[i % this.ports.length];
					sent.add(pool.submit(() -> {
						start.await();
						return post(port, key, body);
					}));
				}
				calls.put(key, sent);
			}
			start.countDown();
			for (Map.Entry<String, List<Future<HttpResponse<String>>>> call : calls.entrySet()) {
				List<HttpResponse<String>> received = new ArrayList<>();
				for (Future<HttpResponse<String>> future : call.getValue()) {
					received.add(future.get(60, TimeUnit.SECONDS));
				}
				answers.put(call.getKey(), received);
			}
		}
		finally {
			pool.shutdownNow();
		}
		for (Map.Entry<String, List<HttpResponse<String>>> answer : answers.entrySet()) {
			for (int i = 0; i < retries; i++) {
				answer.getValue().add(post(this.ports[i % this.ports.length], answer.getKey(), body));
			}
		}
		return answers;
	}

	/**
	 * Asserts that each key ran once by {@code executions} (a ledger outside the store,
	 * by key), that its successes are its first answer and identical replays (marked as
	 * such), at least {@code successes} of them, and that every other answer is 409 with
	 * {@code Retry-After}.
	 */
	static void assertRanOnceAndReplayed(Map<String, List<HttpResponse<String>>> answers,
			ToIntFunction<String> executions, int successes) {
		for (Map.Entry<String, List<HttpResponse<String>>> answer : answers.entrySet()) {
			String key = answer.getKey();
			assertThat(executions.applyAsInt(key)).as("executions of key %s", key).isOne();
			List<HttpResponse<String>> succeeded = answer.getValue()
				.stream()
				.filter((response) -> response.statusCode() / 100 == 2)
				.toList();
			assertThat(succeeded).as("the first answer and the replays of key %s", key)
				.hasSizeGreaterThanOrEqualTo(successes);
			String original = succeeded.get(0).body();
			for (HttpResponse<String> response : answer.getValue()) {
				if (response.statusCode() / 100 == 2) {
					assertThat(response.body()).as("a success of key %s", key).isEqualTo(original);
				}
				else {
					assertThat(response.statusCode()).as("key %s: %s", key, response.body()).isEqualTo(409);
					assertThat(response.headers().firstValue("Retry-After")).as("Retry-After of a 409").isPresent();
				}
			}
			assertThat(succeeded.stream()
				.filter((response) -> response.headers().firstValue("Idempotent-Replayed").isPresent())
				.count()).as("replays of key %s", key).isEqualTo(succeeded.size() - 1);
		}
	}

	/**
	 * How many answers of each status there were, for the test's output.
	 */
	static Map<Integer, Long> statuses(Map<String, List<HttpResponse<String>>> answers) {
		Map<Integer, Long> statuses = new java.util.TreeMap<>();
		answers.values()
			.stream()
			.flatMap(List::stream)
			.forEach((response) -> statuses.merge(response.statusCode(), 1L, Long::sum));
		return statuses;
	}

	HttpResponse<String> post(int port, String key, String body) throws Exception {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + this.path))
			.timeout(Duration.ofSeconds(30))
			.header("Content-Type", "application/json")
			.header("Idempotency-Key", key)
			.POST(HttpRequest.BodyPublishers.ofString(body))
			.build();
		return this.http.send(request, HttpResponse.BodyHandlers.ofString());
	}

}
