package io.github.idempotent.web;

import java.net.http.HttpResponse;
import java.util.UUID;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.github.idempotent.web.WebTestApplication.Executions;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * With {@code idempotent.web.replayed-response-headers}, a replay carries only the
 * headers it names (and its content type), never a credential even when named.
 */
@SpringBootTest(classes = WebTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT, properties = {
		"idempotent.store.type=memory", "idempotent.web.replayed-response-headers=Location,X-Payment-Id,X-Auth-Token" })
class ReplayedHeadersAllowListHttpTests {

	@LocalServerPort
	private int port;

	@Autowired
	private Executions executions;

	@Test
	void aReplayCarriesOnlyTheListedHeaders() throws Exception {
		HttpClientSupport http = new HttpClientSupport(this.port);
		String key = UUID.randomUUID().toString();
		String body = "{\"orderNo\":\"AL-1\",\"amount\":3}";
		HttpResponse<String> first = http.post("/payments", key, body);
		HttpResponse<String> replay = http.post("/payments", key, body);

		assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(replay.body()).isEqualTo(first.body());
		assertThat(replay.headers().firstValue("Content-Type")).isEqualTo(first.headers().firstValue("Content-Type"));
		assertThat(replay.headers().firstValue("Location")).isEqualTo(first.headers().firstValue("Location"));
		assertThat(replay.headers().firstValue("X-Payment-Id")).isEqualTo(first.headers().firstValue("X-Payment-Id"));
		assertThat(this.executions.count("payments")).isEqualTo(1);
	}

	@Test
	void aHeaderNotListedIsNotReplayedNorIsAListedCredential() throws Exception {
		HttpClientSupport http = new HttpClientSupport(this.port);
		String key = UUID.randomUUID().toString();
		String body = "{\"orderNo\":\"AL-2\",\"amount\":3}";
		HttpResponse<String> first = http.post("/logins", key, body);
		HttpResponse<String> replay = http.post("/logins", key, body);

		assertThat(first.headers().firstValue("X-Auth-Token")).isPresent();
		assertThat(first.headers().firstValue("X-Session-Token")).isPresent();
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(replay.headers().allValues("X-Auth-Token")).isEmpty();
		assertThat(replay.headers().allValues("X-Session-Token")).as("not listed").isEmpty();
		assertThat(replay.headers().firstValue("X-Payment-Id")).isEqualTo(first.headers().firstValue("X-Payment-Id"));
	}

}
