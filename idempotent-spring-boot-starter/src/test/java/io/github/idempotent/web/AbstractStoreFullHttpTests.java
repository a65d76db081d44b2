package io.github.idempotent.web;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.UUID;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.github.idempotent.web.WebTestApplication.Executions;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An attacker who fills the store must not turn the protection off for everyone else.
 * Under {@code failure-mode=open} a full store was taken for one that is down: the
 * victim's call ran unprotected, and its retry charged the victim a second time. A full
 * store refuses the victim's key with a 503 problem of its own, and runs nothing.
 * Subclasses say which store, bounded how, and how big the attacker's payloads are.
 */
abstract class AbstractStoreFullHttpTests {

	@LocalServerPort
	private int port;

	@Autowired
	private Executions executions;

	private final HttpClient http = HttpClient.newHttpClient();

	/**
	 * Length of the order number of the attacker's payloads: what each of its records
	 * costs the store.
	 */
	abstract int attackerOrderLength();

	@Test
	void aFullStoreRefusesTheVictimsKeyRatherThanChargeTheVictimTwice() throws Exception {
		String run = UUID.randomUUID().toString();
		boolean refused = false;
		for (int i = 0; i < 100 && !refused; i++) {
			refused = send("alice", "attacker-" + run + "-" + i, randomOrderNo(attackerOrderLength()))
				.statusCode() == 503;
		}
		int before = this.executions.count("payments");

		HttpResponse<String> first = send("bob", "victim-" + run, "V-1");
		HttpResponse<String> retry = send("bob", "victim-" + run, "V-1");

		assertThat(this.executions.count("payments")).as("charges of the victim").isEqualTo(before);
		for (HttpResponse<String> response : java.util.List.of(first, retry)) {
			assertThat(response.statusCode()).isEqualTo(503);
			assertThat(response.headers().firstValue("Retry-After")).hasValue("3");
			assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
			assertThat(response.body()).contains("\"type\":\"urn:idempotent:store-full\"")
				.contains("\"title\":\"Idempotency store full\"")
				.doesNotContain("Exception");
		}
	}

	private HttpResponse<String> send(String user, String key, String orderNo) throws Exception {
		return pay(this.http, this.port, user, key, orderNo);
	}

	/**
	 * An order number of {@code length} random hex digits: it costs the store what it
	 * says even when results are compressed, and the response's headers, which repeat it,
	 * stay within Tomcat's limit up to a few KB.
	 */
	static String randomOrderNo(int length) {
		StringBuilder order = new StringBuilder(length);
		while (order.length() < length) {
			order.append(UUID.randomUUID().toString().replace("-", ""));
		}
		return order.substring(0, length);
	}

	/**
	 * POSTs a payment of {@code orderNo} to {@code /payments} as {@code user} (HTTP
	 * Basic, the user's name as its password), under {@code key}.
	 */
	static HttpResponse<String> pay(HttpClient http, int port, String user, String key, String orderNo)
			throws Exception {
		String credentials = Base64.getEncoder().encodeToString((user + ":" + user).getBytes(StandardCharsets.UTF_8));
		return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/payments"))
			.header("Content-Type", "application/json")
			.header("Authorization", "Basic " + credentials)
			.header("Idempotency-Key", key)
			.POST(HttpRequest.BodyPublishers.ofString("{\"orderNo\":\"" + orderNo + "\",\"amount\":5}"))
			.build(), HttpResponse.BodyHandlers.ofString());
	}

}
