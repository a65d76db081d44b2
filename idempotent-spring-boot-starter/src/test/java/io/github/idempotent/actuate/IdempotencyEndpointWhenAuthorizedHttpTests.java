package io.github.idempotent.actuate;

import java.net.http.HttpResponse;
import java.util.UUID;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.github.idempotent.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code show-values=when-authorized} with {@code roles=OPS}: only an authenticated
 * caller in that role sees stored results, as with Boot's {@code env} endpoint.
 */
@SpringBootTest(classes = ActuatorTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "management.endpoints.web.exposure.include=health,idempotency",
				"management.endpoint.idempotency.show-values=when-authorized",
				"management.endpoint.idempotency.roles=OPS", "idempotent.store.type=redis" })
class IdempotencyEndpointWhenAuthorizedHttpTests {

	private static final JsonMapper JSON = JsonMapper.builder().build();

	@LocalServerPort
	private int port;

	private ActuatorHttp client;

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", TestRedis::host);
		registry.add("spring.data.redis.port", TestRedis::port);
	}

	@BeforeEach
	void client() {
		this.client = new ActuatorHttp(this.port);
	}

	@Test
	void onlyACallerInTheRoleSeesTheResult() throws Exception {
		String key = "authorized-" + UUID.randomUUID();
		this.client.send(this.client.post("/orders", key, null));
		String path = "/actuator/idempotency/orders/" + key;
		assertThat(result(this.client.send(this.client.get(path)))).isNull();
		assertThat(result(this.client.send(this.client.get(path, "alice")))).isNull();
		assertThat(result(this.client.send(this.client.get(path, "ops")))).contains("espresso");
	}

	private static String result(HttpResponse<String> response) {
		assertThat(response.statusCode()).isEqualTo(200);
		JsonNode result = JSON.readTree(response.body()).path("response").path("body");
		assertThat(JSON.readTree(response.body()).path("resultSize").asInt()).isPositive();
		return (result.isMissingNode() || result.isNull()) ? null : result.asString();
	}

}
