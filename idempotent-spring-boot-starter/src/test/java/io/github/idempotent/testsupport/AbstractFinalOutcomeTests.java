package io.github.idempotent.testsupport;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.test.context.DynamicPropertyRegistry;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which responses are final, under the default {@code idempotent.web.release-on-status}
 * (429 and every 5xx) and under a handler's own {@code releaseOnStatus}: a released
 * response leaves no record in the store, so the retry with the same key runs the handler
 * again, even with another body; a kept one is replayed. Runs are counted by the
 * {@link FinalOutcomesController}'s ledger, records read from the store itself. One
 * subclass per web stack and store.
 */
public abstract class AbstractFinalOutcomeTests {

	private static final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	@LocalServerPort
	private int port;

	@Autowired
	private FinalOutcomesController ledger;

	/**
	 * How many records the store holds for {@code clientKey}, read without the starter.
	 */
	protected abstract long records(String clientKey);

	@Test
	void a503ReleasesItsKeySoTheRetryRunsAgainAndItsSuccessIsReplayed() throws Exception {
		String key = UUID.randomUUID().toString();
		HttpResponse<String> unavailable = post("/outcomes/unavailable-once", key, "{}");
		assertThat(unavailable.statusCode()).isEqualTo(503);
		assertThat(unavailable.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(records(key)).isZero();

		HttpResponse<String> retry = post("/outcomes/unavailable-once", key, "{}");
		assertThat(retry.statusCode()).isEqualTo(200);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(this.ledger.runs("unavailable-once", key)).isEqualTo(2);

		HttpResponse<String> again = post("/outcomes/unavailable-once", key, "{}");
		assertThat(again.statusCode()).isEqualTo(200);
		assertThat(again.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(again.body()).isEqualTo(retry.body());
		assertThat(this.ledger.runs("unavailable-once", key)).isEqualTo(2);
		assertThat(records(key)).isEqualTo(1);
	}

	@Test
	void a503TheHandlerKeepsIsReplayed() throws Exception {
		String key = UUID.randomUUID().toString();
		HttpResponse<String> unavailable = post("/outcomes/unavailable-once-kept", key, "{}");
		assertThat(unavailable.statusCode()).isEqualTo(503);
		assertThat(records(key)).isEqualTo(1);

		HttpResponse<String> retry = post("/outcomes/unavailable-once-kept", key, "{}");
		assertThat(retry.statusCode()).isEqualTo(503);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(retry.headers().firstValue("Retry-After")).hasValue("1");
		assertThat(retry.body()).isEqualTo(unavailable.body());
		assertThat(this.ledger.runs("unavailable-once-kept", key)).isEqualTo(1);
	}

	@Test
	void aReleased400LetsACorrectedRetryRunUnderTheSameKey() throws Exception {
		String key = UUID.randomUUID().toString();
		HttpResponse<String> refused = post("/outcomes/checked-released", key, "{\"amount\":-5}");
		assertThat(refused.statusCode()).isEqualTo(400);
		assertThat(records(key)).isZero();

		HttpResponse<String> corrected = post("/outcomes/checked-released", key, "{\"amount\":5}");
		assertThat(corrected.statusCode()).isEqualTo(201);
		assertThat(corrected.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(corrected.body()).contains("\"amount\":5");
		assertThat(this.ledger.runs("checked-released", key)).isEqualTo(2);

		HttpResponse<String> again = post("/outcomes/checked-released", key, "{\"amount\":5}");
		assertThat(again.statusCode()).isEqualTo(201);
		assertThat(again.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(this.ledger.runs("checked-released", key)).isEqualTo(2);
	}

	/**
	 * A 400 is final by default: the key stays used by the request that got it, and
	 * another body under it is a reused key.
	 */
	@Test
	void a400IsFinalByDefault() throws Exception {
		String key = UUID.randomUUID().toString();
		assertThat(post("/outcomes/checked", key, "{\"amount\":-5}").statusCode()).isEqualTo(400);
		assertThat(records(key)).isEqualTo(1);
		assertThat(post("/outcomes/checked", key, "{\"amount\":5}").statusCode()).isEqualTo(422);
		HttpResponse<String> retry = post("/outcomes/checked", key, "{\"amount\":-5}");
		assertThat(retry.statusCode()).isEqualTo(400);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(this.ledger.runs("checked", key)).isEqualTo(1);
	}

	private HttpResponse<String> post(String path, String key, String body) throws Exception {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
			.timeout(Duration.ofSeconds(20))
			.header("Content-Type", "application/json")
			.header("Idempotency-Key", key)
			.POST(HttpRequest.BodyPublishers.ofString(body))
			.build();
		return http.send(request, HttpResponse.BodyHandlers.ofString());
	}

	/**
	 * Points the application at the test Redis, its records under {@code prefix}.
	 */
	public static void useRedis(DynamicPropertyRegistry registry, String prefix) {
		registry.add("spring.data.redis.host", TestRedis::host);
		registry.add("spring.data.redis.port", TestRedis::port);
		registry.add("idempotent.key-prefix", () -> prefix);
	}

	/**
	 * The records of {@code clientKey} under {@code prefix} in Redis, read with
	 * {@code KEYS}.
	 */
	public static long redisRecords(RedisConnectionFactory connectionFactory, String prefix, String clientKey) {
		try (RedisConnection connection = connectionFactory.getConnection()) {
			return connection.keyCommands().keys((prefix + ":*:" + clientKey).getBytes(StandardCharsets.UTF_8)).size();
		}
	}

}
