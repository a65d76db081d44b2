package io.github.idempotent.web;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.github.idempotent.web.WebTestApplication.Executions;
import io.github.idempotent.web.WebTestApplication.Gate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An attacker who fills the store must not turn the protection off for everyone else.
 * Under {@code failure-mode=open} a full store was taken for one that is down: the
 * victim's call ran unprotected, and its retry charged the victim a second time. A full
 * store refuses the victim's key with a 503 problem of its own, and runs nothing. And a
 * store that fills up while the victim's call runs never turns that call into a second
 * charge: a Redis under {@code noeviction} took the call's small placeholder, refused its
 * result, and the owner freed its key once its completion had been refused until
 * {@code max-duration}, so the client's retry ran the method again. Subclasses say which
 * store, bounded how, and how big the attacker's payloads are.
 */
@ExtendWith(OutputCaptureExtension.class)
abstract class AbstractStoreFullHttpTests {

	@LocalServerPort
	private int port;

	@Autowired
	private Executions executions;

	@Autowired
	private Gate gate;

	private final HttpClient http = HttpClient.newHttpClient();

	/**
	 * Length of the order number of the attacker's payloads: what each of its records
	 * costs the store.
	 */
	abstract int attackerOrderLength();

	@Test
	void aFullStoreRefusesTheVictimsKeyRatherThanChargeTheVictimTwice() throws Exception {
		String run = UUID.randomUUID().toString();
		fill(run);
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

	@Test
	void aStoreThatFillsUpWhileACallRunsNeverRunsItAgain(CapturedOutput output) throws Exception {
		String run = UUID.randomUUID().toString();
		String key = "victim-during-" + run;
		this.gate.reset();
		int before = this.executions.count("gated");
		CompletableFuture<HttpResponse<String>> first = CompletableFuture.supplyAsync(() -> gated(key));
		assertThat(this.gate.awaitEntered()).isTrue();
		fillWhileACallRuns(run);
		this.gate.open();
		assertThat(first.get(60, TimeUnit.SECONDS).statusCode()).as("the caller gets its result").isEqualTo(200);

		List<HttpResponse<String>> retries = new ArrayList<>();
		retries.add(gated(key));
		makeRoom();
		retries.add(gated(key));
		retries.add(gated(key));
		assertThat(this.executions.count("gated")).as("runs of the victim's call").isEqualTo(before + 1);
		for (HttpResponse<String> retry : retries) {
			assertRetryOfACallThatRan(retry, output);
		}
	}

	/**
	 * Fills the store: the attacker's keys until the store refuses them.
	 */
	void fill(String run) throws Exception {
		for (int i = 0; i < 1_000 && send("alice", "attacker-" + run + "-" + i, randomOrderNo(attackerOrderLength()))
			.statusCode() != 503; i++) {
			// until the store is full
		}
	}

	/**
	 * Fills the store while the victim's call runs, as {@link #fill} does.
	 */
	void fillWhileACallRuns(String run) throws Exception {
		fill(run);
	}

	/**
	 * Makes room in the store again, as an operator would; nothing where the test cannot.
	 */
	void makeRoom() throws Exception {
	}

	/**
	 * What a retry of the victim's call gets once the store filled up while it ran: its
	 * replay, or an error that says the call completed without its result stored, or 503
	 * while the store is full; never a run (counted by the test).
	 */
	void assertRetryOfACallThatRan(HttpResponse<String> retry, CapturedOutput output) {
		if (retry.statusCode() == 200) {
			assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		}
		else if (retry.statusCode() == 500) {
			assertNotStored(retry, output);
		}
		else {
			assertThat(retry.statusCode()).isEqualTo(503);
			assertThat(retry.headers().firstValue("Retry-After")).isPresent();
		}
	}

	/**
	 * The answer to a retry of a call whose result was not stored: the
	 * {@code result-unavailable} problem, saying so, and one ERROR line in the log.
	 */
	static void assertNotStored(HttpResponse<String> retry, CapturedOutput output) {
		assertThat(retry.statusCode()).isEqualTo(500);
		assertThat(retry.body()).contains("\"type\":\"urn:idempotent:result-unavailable\"")
			.contains("its result was not stored")
			.doesNotContain("Exception");
		assertThat(output.getAll()
			.lines()
			.filter((line) -> line.contains("ERROR") && line.contains("was not stored (")
					&& line.contains("its caller got it")))
			.hasSize(1);
	}

	HttpResponse<String> send(String user, String key, String orderNo) throws Exception {
		return pay(this.http, this.port, user, key, orderNo);
	}

	private HttpResponse<String> gated(String key) {
		try {
			return this.http
				.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/gated-payments"))
					.header("Content-Type", "application/json")
					.header("Authorization",
							"Basic " + Base64.getEncoder().encodeToString("bob:bob".getBytes(StandardCharsets.UTF_8)))
					.header("Idempotency-Key", key)
					.POST(HttpRequest.BodyPublishers.ofString("{\"orderNo\":\"G-1\",\"amount\":5}"))
					.build(), HttpResponse.BodyHandlers.ofString());
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
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
