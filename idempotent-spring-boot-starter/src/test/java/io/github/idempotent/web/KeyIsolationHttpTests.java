package io.github.idempotent.web;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.UUID;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.github.idempotent.testsupport.TestRedis;
import io.github.idempotent.web.WebTestApplication.Executions;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Records are never shared between operations, and a key reaches the store only if the
 * store can keep it apart from every other key: over real HTTP, against Redis.
 */
@SpringBootTest(classes = WebTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = "idempotent.store.type=redis")
class KeyIsolationHttpTests {

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", TestRedis::host);
		registry.add("spring.data.redis.port", TestRedis::port);
	}

	@LocalServerPort
	private int port;

	private HttpClientSupport http() {
		return new HttpClientSupport(this.port);
	}

	@Autowired
	private Executions executions;

	@BeforeEach
	void reset() {
		this.executions.reset();
	}

	@Test
	void twoControllersWithTheSameSimpleNameAndMethodNeverShareRecords() throws Exception {
		String key = UUID.randomUUID().toString();
		String body = "{\"orderNo\":\"L-1\",\"amount\":3}";
		HttpResponse<String> a = http().post("/a/ledger", key, body);
		HttpResponse<String> b = http().post("/b/ledger", key, body);
		assertThat(a.body()).contains("\"id\":\"a-1\"");
		assertThat(b.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(b.body()).contains("\"id\":\"b-1\"");
		assertThat(this.executions.count("a-ledger")).isEqualTo(1);
		assertThat(this.executions.count("b-ledger")).isEqualTo(1);
	}

	@Test
	void aKeyWithABrokenSurrogatePairIsRefusedInsteadOfSharingARecordWithAnotherKey() throws Exception {
		String suffix = UUID.randomUUID().toString();
		// In UTF-8, Redis would store "\uD800" as "?": the two keys would be one record.
		HttpResponse<String> broken = http().post("/keyed-payments", null,
				"{\"orderNo\":\"K-" + suffix + "\\ud800\",\"amount\":4}");
		HttpResponse<String> plain = http().post("/keyed-payments", null,
				"{\"orderNo\":\"K-" + suffix + "?\",\"amount\":4}");
		assertThat(broken.statusCode()).isEqualTo(400);
		assertThat(broken.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(plain.statusCode()).isEqualTo(200);
		assertThat(plain.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(this.executions.count("keyed")).isEqualTo(1);
	}

	@Test
	void aKeyWithAControlCharacterIsABadRequestNotAStoreFailure() throws Exception {
		HttpResponse<String> response = http().post("/keyed-payments", null,
				"{\"orderNo\":\"K-" + UUID.randomUUID() + "\\u0000\",\"amount\":4}");
		assertThat(response.statusCode()).isEqualTo(400);
		assertThat(response.body()).contains("printable");
		assertThat(this.executions.count("keyed")).isZero();
	}

	@Test
	void aKeyExpressionThatDoesNotFitTheRequestIsAServerErrorWithoutItsText() throws Exception {
		HttpResponse<String> response = http().post("/customer-orders", null,
				"{\"orderNo\":\"C-1\",\"customer\":null,\"amount\":4}");
		assertThat(response.statusCode()).isEqualTo(500);
		assertThat(response.body()).doesNotContain("#order").doesNotContain("customer.id");
		assertThat(this.executions.count("customer-orders")).isZero();
	}

	@Test
	void aMissingKeyFieldIsABadRequestThatNamesNoExpressionOrClass() throws Exception {
		HttpResponse<String> response = http().post("/keyed-payments", null, "{\"amount\":4}");
		assertThat(response.statusCode()).isEqualTo(400);
		assertThat(response.body()).doesNotContain("#request")
			.doesNotContain("WebTestApplication")
			.doesNotContain("io.github");
	}

}
