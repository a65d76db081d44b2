package io.github.idempotent.actuate;

import java.net.http.HttpResponse;
import java.util.Base64;
import java.util.UUID;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.github.idempotent.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * With the endpoint's default access, read-only, a deletion is refused; with
 * {@code show-values=always} a completed call is read with its result.
 */
@SpringBootTest(classes = ActuatorTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "management.endpoints.web.exposure.include=health,idempotency",
				"management.endpoint.idempotency.show-values=always", "idempotent.store.type=redis" })
class IdempotencyEndpointAccessHttpTests {

	@Autowired
	private OrderController controller;

	@LocalServerPort
	private int port;

	private ActuatorHttp client;

	@BeforeEach
	void reset() {
		this.client = new ActuatorHttp(this.port);
		this.controller.reset();
	}

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", TestRedis::host);
		registry.add("spring.data.redis.port", TestRedis::port);
	}

	@Test
	void aDeletionIsRefusedWithoutUnrestrictedAccess() throws Exception {
		String key = "kept-" + UUID.randomUUID();
		this.client.send(this.client.post("/orders", key, null));
		HttpResponse<String> refused = this.client.send(this.client.delete("/actuator/idempotency/orders/" + key));
		assertThat(refused.statusCode()).isIn(404, 405);
		assertThat(this.client.send(this.client.get("/actuator/idempotency/orders/" + key)).statusCode())
			.isEqualTo(200);
		this.client.send(this.client.post("/orders", key, null));
		assertThat(this.controller.orders()).isEqualTo(1);
	}

	@Test
	void aCompletedCallIsReadWithItsResultWhenValuesAreShown() throws Exception {
		String key = "shown-" + UUID.randomUUID();
		this.client.send(this.client.post("/orders", key, null));
		HttpResponse<String> read = this.client.send(this.client.get("/actuator/idempotency/orders/" + key));
		assertThat(read.statusCode()).isEqualTo(200);
		JsonNode record = JsonMapper.builder().build().readTree(read.body());
		assertThat(record.path("fingerprint").asString()).startsWith("sha256:");
		JsonNode response = record.path("response");
		// The response as its caller got it: status, type and body as text.
		assertThat(response.path("status").asInt()).isEqualTo(200);
		assertThat(response.path("headers").path("Content-Type").path(0).asString()).startsWith("application/json");
		assertThat(response.path("body").asString()).contains("\"item\":\"espresso\"");
		assertThat(response.path("bodyBase64").isMissingNode() || response.path("bodyBase64").isNull()).isTrue();
	}

	@Test
	void aBinaryResponseIsShownAsBase64() throws Exception {
		String key = "receipt-" + UUID.randomUUID();
		HttpResponse<byte[]> receipt = this.client.http()
			.send(this.client.post("/receipts", key, null), HttpResponse.BodyHandlers.ofByteArray());
		HttpResponse<String> read = this.client.send(this.client.get("/actuator/idempotency/receipts/" + key));
		JsonNode record = JsonMapper.builder().build().readTree(read.body());
		assertThat(record.path("fingerprint").asString()).startsWith("sha256:");
		JsonNode response = record.path("response");
		assertThat(response.path("headers").path("Content-Type").path(0).asString()).isEqualTo("application/pdf");
		assertThat(response.path("body").isMissingNode() || response.path("body").isNull()).isTrue();
		assertThat(Base64.getDecoder().decode(response.path("bodyBase64").asString())).isEqualTo(receipt.body());
	}

}
