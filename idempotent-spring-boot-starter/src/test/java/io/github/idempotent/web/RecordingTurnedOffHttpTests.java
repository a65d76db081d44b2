package io.github.idempotent.web;

import java.net.http.HttpResponse;
import java.util.UUID;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.github.idempotent.testsupport.TestRedis;

import static io.github.idempotent.testsupport.ExactReplays.assertExactAmounts;
import static io.github.idempotent.testsupport.ExactReplays.assertReplayOf;
import static io.github.idempotent.testsupport.ExactReplays.post;
import static io.github.idempotent.testsupport.ExactReplays.send;

/**
 * Two instances on one Redis, one recording responses and one with
 * {@code idempotent.web.record-responses=false}, as during a rolling upgrade or a
 * rollback: each replays what the other stored.
 */
@SpringBootTest(classes = WebTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "idempotent.store.type=redis", "idempotent.local-cache.enabled=false" })
class RecordingTurnedOffHttpTests {

	private static ConfigurableApplicationContext notRecording;

	@LocalServerPort
	private int port;

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", TestRedis::host);
		registry.add("spring.data.redis.port", TestRedis::port);
	}

	@BeforeAll
	static void startAnInstanceThatDoesNotRecord() {
		notRecording = new SpringApplicationBuilder(WebTestApplication.class)
			.properties("server.port=0", "idempotent.store.type=redis", "idempotent.local-cache.enabled=false",
					"idempotent.web.record-responses=false", "spring.data.redis.host=" + TestRedis.host(),
					"spring.data.redis.port=" + TestRedis.port())
			.run();
	}

	@AfterAll
	static void stop() {
		notRecording.close();
	}

	private static int notRecordingPort() {
		return notRecording.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
	}

	@Test
	void aRecordedResponseReplaysOnAnInstanceThatDoesNotRecord() throws Exception {
		String key = UUID.randomUUID().toString();
		HttpResponse<byte[]> first = send(post(this.port, "/exact/untyped-entity", key).build());
		HttpResponse<byte[]> replay = send(post(notRecordingPort(), "/exact/untyped-entity", key).build());
		assertReplayOf(replay, first, key);
		assertExactAmounts(replay.body());
	}

	@Test
	void aReturnValueStoredWithoutRecordingReplaysOnAnInstanceThatRecords() throws Exception {
		String key = UUID.randomUUID().toString();
		HttpResponse<byte[]> first = send(post(notRecordingPort(), "/exact/text", key).build());
		HttpResponse<byte[]> replay = send(post(this.port, "/exact/text", key).build());
		assertReplayOf(replay, first, key);
	}

}
