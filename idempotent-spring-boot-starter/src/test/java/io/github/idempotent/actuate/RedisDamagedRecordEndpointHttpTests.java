package io.github.idempotent.actuate;

import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStringCommands.SetOption;
import org.springframework.data.redis.core.types.Expiration;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.github.idempotent.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Damaged records on Redis read over the Actuator endpoint: each is shown as unreadable
 * with what is wrong with it, the listing of records in progress shows them instead of
 * failing, and a delete frees the key for the next call.
 */
@SpringBootTest(classes = ActuatorTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "management.endpoints.web.exposure.include=health,idempotency",
				"management.endpoint.idempotency.access=unrestricted", "idempotent.store.type=redis" })
class RedisDamagedRecordEndpointHttpTests {

	private static final String PREFIX = "damaged-actuator-" + UUID.randomUUID().toString().substring(0, 8);

	private static final JsonMapper JSON = JsonMapper.builder().build();

	@LocalServerPort
	private int port;

	@Autowired
	private RedisConnectionFactory connectionFactory;

	@Autowired
	private OrderController controller;

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", TestRedis::host);
		registry.add("spring.data.redis.port", TestRedis::port);
		registry.add("idempotent.key-prefix", () -> PREFIX);
	}

	@Test
	void damagedRecordsAreShownUnreadableListedAndDeletable() throws Exception {
		ActuatorHttp client = new ActuatorHttp(this.port);
		this.controller.reset();
		String garbage = "garbage-" + UUID.randomUUID();
		String list = "list-" + UUID.randomUUID();
		String truncated = "truncated-" + UUID.randomUUID();
		for (String key : List.of(garbage, list, truncated)) {
			assertThat(client.send(client.post("/orders", key, null)).statusCode()).isEqualTo(200);
		}
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			connection.stringCommands()
				.set(recordKey(connection, garbage), utf8("garbage"), Expiration.seconds(600), SetOption.upsert());
			byte[] listKey = recordKey(connection, list);
			connection.keyCommands().del(listKey);
			connection.listCommands().rPush(listKey, utf8("not a record"));
			connection.keyCommands().expire(listKey, 600);
			// In progress, cut inside its owner token: the listing reads it.
			connection.stringCommands()
				.set(recordKey(connection, truncated), utf8("P1234"), Expiration.seconds(600), SetOption.upsert());
		}

		assertUnreadable(client, garbage, "layout byte 0x67");
		assertUnreadable(client, list, "Redis list");
		assertUnreadable(client, truncated, "truncated");

		// The shared Redis holds other tests' records too: every page of the SCAN is
		// read.
		List<String> unreadable = new ArrayList<>();
		String cursor = null;
		for (int pages = 0; pages < 10_000; pages++) {
			HttpResponse<String> listing = client.send(client.get("/actuator/idempotency?limit=500"
					+ ((cursor != null) ? "&cursor=" + URLEncoder.encode(cursor, StandardCharsets.UTF_8) : "")));
			assertThat(listing.statusCode()).isEqualTo(200);
			JsonNode page = JSON.readTree(listing.body());
			for (JsonNode record : page.path("records")) {
				String key = record.path("key").asString();
				if ("UNREADABLE".equals(record.path("state").asString())
						&& List.of(garbage, list, truncated).contains(key)) {
					unreadable.add(key);
				}
			}
			JsonNode next = page.path("cursor");
			if (next.isMissingNode() || next.isNull()) {
				break;
			}
			cursor = next.asString();
		}
		assertThat(unreadable).containsExactlyInAnyOrder(garbage, list, truncated);

		HttpResponse<String> deleted = client.send(client.delete("/actuator/idempotency/orders/" + list));
		assertThat(deleted.statusCode()).isEqualTo(200);
		assertThat(JSON.readTree(deleted.body()).path("deleted").asBoolean()).isTrue();
		assertThat(client.send(client.post("/orders", list, null)).statusCode()).isEqualTo(200);
		for (String key : List.of(garbage, truncated)) {
			client.send(client.delete("/actuator/idempotency/orders/" + key));
		}
		client.send(client.delete("/actuator/idempotency/orders/" + list));
	}

	private static void assertUnreadable(ActuatorHttp client, String key, String reason) throws Exception {
		HttpResponse<String> read = client.send(client.get("/actuator/idempotency/orders/" + key));
		assertThat(read.statusCode()).isEqualTo(200);
		JsonNode record = JSON.readTree(read.body());
		assertThat(record.path("state").asString()).isEqualTo("UNREADABLE");
		assertThat(record.path("key").asString()).isEqualTo(key);
		assertThat(record.path("reason").asString()).contains(reason);
		assertThat(record.path("expiresIn").asString()).startsWith("PT");
	}

	private static byte[] recordKey(RedisConnection connection, String clientKey) {
		Set<byte[]> keys = connection.keyCommands().keys(utf8(PREFIX + ":*:" + clientKey));
		assertThat(keys).hasSize(1);
		return keys.iterator().next();
	}

	private static byte[] utf8(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

}
