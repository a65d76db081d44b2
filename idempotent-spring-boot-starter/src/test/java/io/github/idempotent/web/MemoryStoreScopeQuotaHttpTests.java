package io.github.idempotent.web;

import java.net.http.HttpClient;
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
 * With {@code idempotent.store.memory.maximum-size-per-scope}, one user who stores more
 * than the quota is refused (503, store full) while another still gets protected calls:
 * ran once, then replayed.
 */
@SpringBootTest(classes = WebTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "idempotent.store.type=memory", "idempotent.failure-mode=open",
				"idempotent.store.memory.maximum-size=1MB", "idempotent.store.memory.maximum-size-per-scope=32KB" })
class MemoryStoreScopeQuotaHttpTests {

	@LocalServerPort
	private int port;

	@Autowired
	private Executions executions;

	private final HttpClient http = HttpClient.newHttpClient();

	@Test
	void oneUserFillingItsQuotaLeavesRoomForAnother() throws Exception {
		String run = UUID.randomUUID().toString();
		String order = AbstractStoreFullHttpTests.randomOrderNo(2_000);
		HttpResponse<String> refused = null;
		for (int i = 0; i < 40 && refused == null; i++) {
			HttpResponse<String> response = send("alice", "quota-" + run + "-" + i, order);
			refused = (response.statusCode() == 201) ? null : response;
		}
		assertThat(refused).as("alice refused past her quota").isNotNull();
		assertThat(refused.statusCode()).isEqualTo(503);
		assertThat(refused.body()).contains("urn:idempotent:store-full");
		assertThat(send("alice", "quota-" + run + "-0", order).headers().firstValue("Idempotent-Replayed"))
			.hasValue("true");

		int before = this.executions.count("payments");
		HttpResponse<String> first = send("bob", "quota-" + run + "-bob", "B-1");
		HttpResponse<String> retry = send("bob", "quota-" + run + "-bob", "B-1");
		assertThat(first.statusCode()).isEqualTo(201);
		assertThat(retry.statusCode()).isEqualTo(201);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(this.executions.count("payments")).isEqualTo(before + 1);
	}

	private HttpResponse<String> send(String user, String key, String orderNo) throws Exception {
		return AbstractStoreFullHttpTests.pay(this.http, this.port, user, key, orderNo);
	}

}
