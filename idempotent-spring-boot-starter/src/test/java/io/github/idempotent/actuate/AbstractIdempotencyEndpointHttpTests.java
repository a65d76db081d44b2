package io.github.idempotent.actuate;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.awaitility.Awaitility;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The endpoint over real HTTP against a real store, with every operation allowed
 * ({@code access=unrestricted}) and stored results hidden ({@code show-values} default):
 * a stuck call is found, read and deleted, after which a retry runs the method; a
 * completed call is read without its body; the operation is named as an operator can know
 * it.
 */
@ExtendWith(OutputCaptureExtension.class)
abstract class AbstractIdempotencyEndpointHttpTests {

	private static final JsonMapper JSON = JsonMapper.builder().build();

	@LocalServerPort
	private int port;

	private ActuatorHttp client;

	@Autowired
	private OrderController controller;

	@Autowired
	private MeterRegistry meters;

	@BeforeEach
	@AfterEach
	void reset() {
		this.client = new ActuatorHttp(this.port);
		this.controller.reset();
	}

	@Test
	void aStuckCallIsListedReadAndDeletedOnlyWithForceAndTheRetryRunsTheMethod(CapturedOutput output) throws Exception {
		String key = "stuck-" + UUID.randomUUID();
		CompletableFuture<HttpResponse<String>> first = this.client.http()
			.sendAsync(post("/stuck", key, null), HttpResponse.BodyHandlers.ofString());
		assertThat(this.controller.awaitStuck()).isTrue();
		assertThat(send(post("/stuck", key, null)).statusCode()).isEqualTo(409);

		JsonNode listed = findListed(key);
		assertThat(listed.path("operation").asString())
			.endsWith("OrderController#stuck(" + ActuatorTestApplication.OrderRequest.class.getName() + ")");
		assertThat(listed.path("scope").asString()).isEqualTo("_");
		assertThat(listed.path("state").asString()).isEqualTo("IN_PROGRESS");
		assertThat(Duration.parse(listed.path("age").asString())).isLessThan(Duration.ofMinutes(1));
		assertThat(listed.path("leaseRemaining").asString()).startsWith("PT");
		// Hidden as the stored result is (show-values default): an unkeyed fingerprint,
		// even
		// hashed again, lets a reader test guesses of a card number in the payload.
		assertThat(listed.path("fingerprint").isMissingNode() || listed.path("fingerprint").isNull()).isTrue();
		HttpResponse<String> older = send(get("/actuator/idempotency?olderThan=1h"));
		assertThat(older.statusCode()).isEqualTo(200);
		assertThat(older.body()).doesNotContain(key);

		HttpResponse<String> read = send(get("/actuator/idempotency/OrderController.stuck/" + key));
		assertThat(read.statusCode()).isEqualTo(200);
		JsonNode record = JSON.readTree(read.body());
		assertThat(record.path("state").asString()).isEqualTo("IN_PROGRESS");
		assertThat(record.path("key").asString()).isEqualTo(key);
		assertThat(record.path("storedKey").asString()).isEqualTo(listed.path("storedKey").asString());

		double deletionsBefore = deletions();
		HttpResponse<String> refused = send(delete("/actuator/idempotency/OrderController.stuck/" + key));
		assertThat(refused.statusCode()).isEqualTo(200);
		JsonNode refusal = JSON.readTree(refused.body());
		assertThat(refusal.path("deleted").asBoolean()).isFalse();
		assertThat(refusal.path("reason").asString()).contains("force=true");
		assertThat(deletions()).isEqualTo(deletionsBefore);
		assertThat(send(post("/stuck", key, null)).statusCode()).isEqualTo(409);

		HttpResponse<String> deleted = send(
				delete("/actuator/idempotency/OrderController.stuck/" + key + "?force=true"));
		assertThat(deleted.statusCode()).isEqualTo(200);
		assertThat(JSON.readTree(deleted.body()).path("deleted").asBoolean()).isTrue();
		assertThat(deletions()).isEqualTo(deletionsBefore + 1);
		assertThat(output).contains("deleted idempotency record " + listed.path("storedKey").asString());
		assertThat(send(get("/actuator/idempotency/OrderController.stuck/" + key)).statusCode()).isEqualTo(404);

		HttpResponse<String> retry = send(post("/stuck", key, null));
		assertThat(retry.statusCode()).isEqualTo(200);
		assertThat(JSON.readTree(retry.body()).path("number").asInt()).isEqualTo(2);
		this.controller.release();
		assertThat(first.get().statusCode()).isEqualTo(200);
		assertThat(this.controller.stuckCalls()).isEqualTo(2);
	}

	/**
	 * The answers docs/operations.md shows have the fields the endpoint sends, no more
	 * and no fewer (a field without a value is left out), and the age is to the second.
	 */
	@Test
	void theAnswersHaveTheFieldsTheOperationsDocShows() throws Exception {
		String key = "documented-" + UUID.randomUUID();
		CompletableFuture<HttpResponse<String>> first = this.client.http()
			.sendAsync(post("/stuck", key, null), HttpResponse.BodyHandlers.ofString());
		assertThat(this.controller.awaitStuck()).isTrue();
		JsonNode listed = findListed(key);
		assertThat(names(listed)).isEqualTo(documentedNames(
				documented("curl 'localhost:8080/actuator/idempotency?olderThan=5m'").path("records").path(0)));
		assertThat(Duration.parse(listed.path("age").asString()).getNano()).isZero();
		JsonNode refusal = JSON.readTree(send(delete("/actuator/idempotency/OrderController.stuck/" + key)).body());
		assertThat(names(refusal)).isEqualTo(documentedNames(
				documented("curl -X DELETE 'localhost:8080/actuator/idempotency/PaymentController.pay/k-2'")));
		this.controller.release();
		assertThat(first.get().statusCode()).isEqualTo(200);

		JsonNode completed = JSON.readTree(send(get("/actuator/idempotency/OrderController.stuck/" + key)).body());
		assertThat(names(completed)).isEqualTo(documentedNames(
				documented("curl 'localhost:8080/actuator/idempotency/PaymentController.pay/k-1?scope=u%3Dalice'")));
		JsonNode deleted = JSON.readTree(send(delete("/actuator/idempotency/OrderController.stuck/" + key)).body());
		assertThat(names(deleted)).isEqualTo(documentedNames(
				documented("curl -X DELETE 'localhost:8080/actuator/idempotency/PaymentController.pay/k-1'")));
	}

	/**
	 * The answer docs/operations.md shows after a command: the JSON lines that follow it.
	 */
	private static JsonNode documented(String command) throws Exception {
		List<String> lines = Files.readAllLines(Path.of("../docs/operations.md"), StandardCharsets.UTF_8);
		int at = lines.indexOf(command);
		assertThat(at).as("docs/operations.md shows " + command).isNotNegative();
		StringBuilder answer = new StringBuilder();
		for (int i = at + 1; i < lines.size() && !lines.get(i).startsWith("```"); i++) {
			answer.append(lines.get(i).trim());
		}
		return JSON.readTree(answer.toString());
	}

	/**
	 * The fields of a documented answer as the endpoint sends them by default: the doc
	 * shows {@code fingerprint}, which only {@code show-values} adds.
	 */
	private static Set<String> documentedNames(JsonNode object) {
		Set<String> names = names(object);
		names.remove("fingerprint");
		return names;
	}

	private static Set<String> names(JsonNode object) {
		assertThat(object.isObject()).as(object + " is an object").isTrue();
		return new TreeSet<>(object.propertyNames());
	}

	@Test
	void aForcedDeleteWinsOverTheHungOwnersRenewalAndItsLateResult(CapturedOutput output) throws Exception {
		String key = "hung-" + UUID.randomUUID();
		CompletableFuture<HttpResponse<String>> first = this.client.http()
			.sendAsync(post("/hung", key, null), HttpResponse.BodyHandlers.ofString());
		assertThat(this.controller.awaitStuck()).isTrue();
		double lostBefore = leaseLost("hung");
		HttpResponse<String> deleted = send(delete("/actuator/idempotency/hung/" + key + "?force=true"));
		assertThat(JSON.readTree(deleted.body()).path("deleted").asBoolean()).isTrue();
		// The owner, alive, renews every half second. Before this change its renewal
		// wrote the deleted record back; now it finds it taken and says so.
		String taken = "Key '" + key + "' of hung was taken from the call running under it";
		Awaitility.await()
			.atMost(Duration.ofSeconds(20))
			.until(() -> output.getOut().contains(taken)
					|| send(get("/actuator/idempotency/hung/" + key)).statusCode() == 200);
		HttpResponse<String> retry = send(post("/hung", key, null));
		assertThat(retry.statusCode()).isEqualTo(200);
		assertThat(JSON.readTree(retry.body()).path("number").asInt()).isEqualTo(2);
		assertThat(output).contains(taken);
		assertThat(leaseLost("hung")).isEqualTo(lostBefore + 1);

		this.controller.release();
		HttpResponse<String> late = first.get();
		assertThat(late.statusCode()).isEqualTo(200);
		assertThat(JSON.readTree(late.body()).path("number").asInt()).isEqualTo(1);
		HttpResponse<String> replay = send(post("/hung", key, null));
		assertThat(replay.statusCode()).isEqualTo(200);
		assertThat(JSON.readTree(replay.body()).path("number").asInt()).isEqualTo(2);
		assertThat(this.controller.stuckCalls()).isEqualTo(2);
	}

	@Test
	void aCompletedCallIsReadWithTheSizeOfItsResultButNotTheResult() throws Exception {
		String key = "order-" + UUID.randomUUID();
		assertThat(send(post("/orders", key, null)).statusCode()).isEqualTo(200);
		HttpResponse<String> read = send(get("/actuator/idempotency/orders/" + key));
		assertThat(read.statusCode()).isEqualTo(200);
		JsonNode record = JSON.readTree(read.body());
		assertThat(record.path("operation").asString()).isEqualTo("orders");
		assertThat(record.path("state").asString()).isEqualTo("COMPLETED");
		assertThat(record.path("resultSize").asInt()).isPositive();
		assertThat(record.path("expiresIn").asString()).startsWith("PT");
		assertThat(record.path("result").isMissingNode() || record.path("result").isNull()).isTrue();
		assertThat(read.body()).doesNotContain("espresso");
	}

	@Test
	void aKeyWithSlashesIsNamedInThePathAsItIs() throws Exception {
		// Order numbers such as ORD/2026/0042 are keys too (the header allows any
		// printable ASCII, and a SpEL key takes a field as it is).
		String key = "ORD/" + UUID.randomUUID() + "/0042";
		assertThat(send(post("/orders", key, null)).statusCode()).isEqualTo(200);
		HttpResponse<String> read = send(get("/actuator/idempotency/orders/" + key));
		assertThat(read.statusCode()).isEqualTo(200);
		assertThat(JSON.readTree(read.body()).path("key").asString()).isEqualTo(key);
		HttpResponse<String> deleted = send(delete("/actuator/idempotency/orders/" + key));
		assertThat(JSON.readTree(deleted.body()).path("deleted").asBoolean()).isTrue();
		send(post("/orders", key, null));
		assertThat(this.controller.orders()).isEqualTo(2);
	}

	@Test
	void aCallerScopeIsGivenAsAParameter() throws Exception {
		String key = "scoped-" + UUID.randomUUID();
		assertThat(send(post("/orders", key, "alice")).statusCode()).isEqualTo(200);
		assertThat(send(get("/actuator/idempotency/orders/" + key)).statusCode()).isEqualTo(404);
		// The scope of an authenticated caller, as the interceptor derives it.
		HttpResponse<String> read = send(get("/actuator/idempotency/orders/" + key + "?scope=u%3Dalice"));
		assertThat(read.statusCode()).isEqualTo(200);
		assertThat(JSON.readTree(read.body()).path("scope").asString()).isEqualTo("u=alice");
	}

	@Test
	void deletingACompletedCallLetsTheNextCallRunTheMethodAgainButForceKeepsIt() throws Exception {
		String key = "again-" + UUID.randomUUID();
		send(post("/orders", key, null));
		assertThat(send(post("/orders", key, null)).statusCode()).isEqualTo(200);
		assertThat(this.controller.orders()).isEqualTo(1);
		assertThat(send(delete("/actuator/idempotency/orders/" + key)).statusCode()).isEqualTo(200);
		send(post("/orders", key, null));
		assertThat(this.controller.orders()).isEqualTo(2);
		// force=true deletes a call in progress only: a stored result is kept.
		String paid = "paid-" + UUID.randomUUID();
		send(post("/orders", paid, null));
		HttpResponse<String> kept = send(delete("/actuator/idempotency/orders/" + paid + "?force=true"));
		assertThat(kept.statusCode()).isEqualTo(200);
		assertThat(JSON.readTree(kept.body()).path("deleted").asBoolean()).isFalse();
		assertThat(JSON.readTree(kept.body()).path("state").asString()).isEqualTo("COMPLETED");
		assertThat(send(post("/orders", paid, null)).statusCode()).isEqualTo(200);
		assertThat(this.controller.orders()).isEqualTo(3);
		HttpResponse<String> absent = send(delete("/actuator/idempotency/orders/absent-" + key));
		assertThat(absent.statusCode()).isEqualTo(200);
		assertThat(JSON.readTree(absent.body()).path("deleted").asBoolean()).isFalse();
	}

	@Test
	void aMalformedAgeIsABadRequest() throws Exception {
		assertThat(send(get("/actuator/idempotency?olderThan=soon")).statusCode()).isEqualTo(400);
	}

	private JsonNode findListed(String key) throws Exception {
		String cursor = null;
		for (int pages = 0; pages < 10_000; pages++) {
			HttpResponse<String> response = send(get("/actuator/idempotency?olderThan=0s&limit=500" + ((cursor != null)
					? "&cursor=" + java.net.URLEncoder.encode(cursor, StandardCharsets.UTF_8) : "")));
			assertThat(response.statusCode()).isEqualTo(200);
			JsonNode page = JSON.readTree(response.body());
			for (JsonNode record : page.path("records")) {
				if (key.equals(record.path("key").asString())) {
					return record;
				}
			}
			JsonNode next = page.path("cursor");
			if (next.isMissingNode() || next.isNull()) {
				break;
			}
			cursor = next.asString();
		}
		throw new AssertionError("Key " + key + " is not listed in progress");
	}

	private double leaseLost(String operation) {
		Counter counter = this.meters.find("idempotent.calls")
			.tag("operation", operation)
			.tag("outcome", "lease_lost")
			.counter();
		return (counter != null) ? counter.count() : 0;
	}

	private double deletions() {
		Counter counter = this.meters.find("idempotent.actuator.deletions").counter();
		return (counter != null) ? counter.count() : 0;
	}

	private HttpResponse<String> send(HttpRequest request) throws Exception {
		return this.client.send(request);
	}

	private HttpRequest post(String path, String key, @Nullable String user) {
		return this.client.post(path, key, user);
	}

	private HttpRequest get(String path) {
		return this.client.get(path);
	}

	private HttpRequest delete(String path) {
		return this.client.delete(path);
	}

}
