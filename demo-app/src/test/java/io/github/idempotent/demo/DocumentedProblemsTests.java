package io.github.idempotent.demo;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.github.idempotent.demo.DemoHttp.Response;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The problem responses quoted in docs/demo.md and docs/http.md are what the demo sends:
 * each documented request is made again, and its answer compared with the quoted one,
 * field by field, with the values that differ from run to run (keys, order numbers,
 * account ids) put in the same placeholders on both sides. A message changed in the code
 * fails this test until the docs quote it.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "demo.payments.wait-for=0s", "demo.payments.gateway-delay=1s" })
class DocumentedProblemsTests {

	private static final JsonMapper json = JsonMapper.builder().build();

	private static final List<Path> DOCUMENTS = List.of(Path.of("../docs/demo.md"), Path.of("../docs/http.md"));

	private static final Pattern ACCOUNT = Pattern.compile("Account (\\d+) has");

	private static final Pattern ORDER = Pattern.compile("(?:of order|Cannot move) ([A-Z]-\\d+)");

	@LocalServerPort
	int port;

	DemoHttp http;

	@BeforeEach
	void client() {
		this.http = new DemoHttp(this.port);
	}

	@Test
	void theQuotedProblemsAreWhatTheDemoSends() throws Exception {
		Map<String, JsonNode> sent = problemsTheDemoSends();
		List<String> quoted = quotedProblems();
		assertThat(quoted).as("problem responses quoted in the docs").hasSizeGreaterThanOrEqualTo(5);
		for (String line : quoted) {
			JsonNode documented = normalized(line, documentedValues(line));
			String type = documented.get("type").asString();
			assertThat(sent).as("a request that answers " + type).containsKey(type);
			assertThat(documented).as("the quoted " + type + " problem").isEqualTo(sent.get(type));
		}
	}

	/**
	 * Each documented refusal, made for real, normalised by type.
	 */
	private Map<String, JsonNode> problemsTheDemoSends() throws Exception {
		Map<String, JsonNode> sent = new LinkedHashMap<>();
		long alice = this.http.openAccount(100_000);
		String paid = order("A");
		this.http.createOrder(paid, alice, 250).expect(201);
		String key = UUID.randomUUID().toString();
		this.http.pay(paid, key).expect(201);

		String other = order("B");
		this.http.createOrder(other, alice, 250).expect(201);
		put(sent, this.http.pay(other, key).expect(422), Map.of(key, "<key>"));
		put(sent, this.http.post("/api/payments", "{\"orderNo\":\"" + other + "\"}").expect(400), Map.of());
		put(sent, this.http.post("/api/orders/" + paid + "/cancel", null).expect(409), Map.of(paid, "<order>"));

		long bob = this.http.openAccount(100);
		String poor = order("B");
		this.http.createOrder(poor, bob, 250).expect(201);
		put(sent, this.http.pay(poor, "bob-" + bob).expect(422),
				Map.of(Long.toString(bob), "<account>", poor, "<order>"));

		String slow = order("A");
		this.http.createOrder(slow, alice, 250).expect(201);
		String slowKey = UUID.randomUUID().toString() + "-5993";
		CompletableFuture<Response> first = CompletableFuture.supplyAsync(() -> this.http.pay(slow, slowKey));
		Thread.sleep(300);
		put(sent, this.http.pay(slow, slowKey).expect(409), Map.of(slowKey, "<key>"));
		first.get().expect(201);
		return sent;
	}

	private static String order(String prefix) {
		return prefix + "-" + (1_000_000_000L + (long) (Math.random() * 8_000_000_000L));
	}

	private static void put(Map<String, JsonNode> sent, Response response, Map<String, String> values) {
		assertThat(response.contentType()).startsWith("application/problem+json");
		JsonNode problem = normalized(response.body(), values);
		sent.putIfAbsent(problem.get("type").asString(), problem);
	}

	/**
	 * The problem lines of the documents, as quoted.
	 */
	private static List<String> quotedProblems() throws IOException {
		List<String> lines = new ArrayList<>();
		for (Path document : DOCUMENTS) {
			for (String line : Files.readAllLines(document)) {
				if (line.startsWith("{\"detail\":") && line.contains("\"type\":\"urn:")) {
					lines.add(line);
				}
			}
		}
		return lines;
	}

	/**
	 * The values of one quoted run: its key, order number and account id.
	 */
	private static Map<String, String> documentedValues(String line) {
		Map<String, String> values = new LinkedHashMap<>();
		JsonNode problem = json.readTree(line);
		if (problem.hasNonNull("idempotencyKey")) {
			values.put(problem.get("idempotencyKey").asString(), "<key>");
		}
		if (problem.hasNonNull("orderNo")) {
			values.put(problem.get("orderNo").asString(), "<order>");
		}
		Matcher account = ACCOUNT.matcher(line);
		if (account.find()) {
			values.put(account.group(1), "<account>");
		}
		Matcher order = ORDER.matcher(line);
		if (order.find()) {
			values.put(order.group(1), "<order>");
		}
		return values;
	}

	private static JsonNode normalized(String body, Map<String, String> values) {
		String text = body;
		List<String> longestFirst = new ArrayList<>(values.keySet());
		longestFirst.sort((a, b) -> b.length() - a.length());
		for (String value : longestFirst) {
			text = text.replace(value, values.get(value));
		}
		return json.readTree(text);
	}

}
