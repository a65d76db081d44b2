package io.github.idempotent.web;

import java.io.ByteArrayOutputStream;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.UUID;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.github.idempotent.testsupport.TestRedis;
import io.github.idempotent.web.WebTestApplication.Executions;

import static io.github.idempotent.testsupport.ExactReplays.post;
import static io.github.idempotent.testsupport.ExactReplays.send;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a {@code @RestController}'s JSON response costs in Redis and how it replays: a
 * record as JSON with {@code 200} or {@code 201} and no other header is stored in no more
 * bytes than its typed value was before responses were recorded as written, and replays
 * as it was sent, as do the responses that keep the general layout ({@code 202}, another
 * header, text) and records of the general layout written by earlier versions. The local
 * cache is off, so that each replay reads the record from Redis.
 */
@SpringBootTest(classes = WebTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "idempotent.store.type=redis", "idempotent.local-cache.enabled=false" })
class RedisJsonResponseHttpTests {

	private static final String PREFIX = "json-" + UUID.randomUUID().toString().substring(0, 8);

	@LocalServerPort
	private int port;

	@Autowired
	private Executions executions;

	@Autowired
	private RedisConnectionFactory connectionFactory;

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", TestRedis::host);
		registry.add("spring.data.redis.port", TestRedis::port);
		registry.add("idempotent.key-prefix", () -> PREFIX);
	}

	@BeforeEach
	void reset() {
		this.executions.reset();
	}

	@ParameterizedTest
	@ValueSource(strings = { "ok", "created", "charset", "large", "accepted", "header", "text" })
	void aReplayIsTheResponseAsItWasSent(String endpoint) throws Exception {
		String key = UUID.randomUUID().toString();
		HttpResponse<byte[]> first = call(endpoint, key);
		assertReplayOf(call(endpoint, key), first);
		assertThat(this.executions.count("json-" + endpoint)).isEqualTo(1);
	}

	@Test
	void theCharsetIsReplayedAsSpringWroteIt() throws Exception {
		String key = UUID.randomUUID().toString();
		HttpResponse<byte[]> first = call("charset", key);
		assertThat(first.headers().firstValue("Content-Type")).hasValue("application/json;charset=UTF-8");
		assertThat(call("charset", key).headers().firstValue("Content-Type"))
			.hasValue("application/json;charset=UTF-8");
	}

	@ParameterizedTest
	@ValueSource(strings = { "accepted", "header", "text" })
	void otherResponsesKeepTheGeneralLayout(String endpoint) throws Exception {
		String key = UUID.randomUUID().toString();
		call(endpoint, key);
		assertThat(storedResult(key)[0]).as("marker of the general layout").isEqualTo((byte) 'H');
	}

	/**
	 * A record of the general layout, as versions before the compact one stored every
	 * response: {@code H}, flags, status, the {@code Content-Type} header, body.
	 */
	@Test
	void aJsonResponseStoredInTheGeneralLayoutReplays() throws Exception {
		String key = UUID.randomUUID().toString();
		HttpResponse<byte[]> first = call("created", key);
		ByteArrayOutputStream general = new ByteArrayOutputStream();
		general.write('H');
		general.write(0);
		general.write(201 >>> 8);
		general.write(201 & 0xFF);
		general.write(1);
		general.write(12);
		general.writeBytes("Content-Type".getBytes(StandardCharsets.US_ASCII));
		general.write(1);
		general.write(16);
		general.writeBytes("application/json".getBytes(StandardCharsets.US_ASCII));
		general.writeBytes(first.body());
		storeResult(key, general.toByteArray());
		assertReplayOf(call("created", key), first);
		assertThat(this.executions.count("json-created")).isEqualTo(1);
	}

	private HttpResponse<byte[]> call(String endpoint, String key) throws Exception {
		return send(post(this.port, "/json/" + endpoint, key).build());
	}

	private static void assertReplayOf(HttpResponse<byte[]> replay, HttpResponse<byte[]> first) {
		assertThat(replay.statusCode()).isEqualTo(first.statusCode());
		assertThat(replay.headers().firstValue("Content-Type")).isEqualTo(first.headers().firstValue("Content-Type"));
		assertThat(replay.headers().firstValue("X-Run")).isEqualTo(first.headers().firstValue("X-Run"));
		assertThat(replay.body()).isEqualTo(first.body());
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
	}

	private byte[] storedResult(String clientKey) {
		return new RedisStoredResults(this.connectionFactory, PREFIX).read(clientKey);
	}

	private void storeResult(String clientKey, byte[] result) {
		new RedisStoredResults(this.connectionFactory, PREFIX).replace(clientKey, result);
	}

}
