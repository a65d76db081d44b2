package io.github.idempotent.demo;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.test.context.ActiveProfiles;

import io.github.idempotent.demo.DemoHttp.Response;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A payment whose instance dies after the debit committed and before it answered: a real
 * crash, a second demo JVM killed with SIGKILL, sharing PostgreSQL and Redis with this
 * test's instance, which serves the client's retry. The retry takes the key over once the
 * dead call's lease runs out, is told so, finds the payment the dead call made, and
 * answers with it: debited once, and the {@code 201} the first attempt's client never
 * got.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "idempotent.lease=" + CrashedPaymentTests.LEASE, "idempotent.ttl=10m" })
@ActiveProfiles("postgres")
@RequiresDatabase(name = "PostgreSQL", port = 5432)
class CrashedPaymentTests {

	/**
	 * Short, so that the retry takes the dead call's key over within the demo's wait for
	 * a duplicate (5 s).
	 */
	static final String LEASE = "2s";

	@LocalServerPort
	int port;

	@Autowired
	JdbcClient jdbc;

	private DemoHttp survivor;

	private Process victim;

	private Path victimLog;

	@BeforeEach
	void start() throws IOException {
		this.survivor = new DemoHttp(this.port);
		this.victimLog = Files.createTempFile("crashed-payment-victim", ".log");
	}

	@AfterEach
	void stop() throws IOException {
		if (this.victim != null) {
			this.victim.destroyForcibly();
		}
		Files.deleteIfExists(this.victimLog);
	}

	@Test
	void aPaymentWhoseInstanceDiedAfterTheDebitIsAnsweredByTheRetryAndDebitedOnce() throws Exception {
		long account = this.survivor.openAccount(1_000);
		String orderNo = "crash-" + UUID.randomUUID().toString().substring(0, 13);
		this.survivor.createOrder(orderNo, account, 400).expect(201);
		String key = "key-" + UUID.randomUUID();
		int victimPort = freePort();
		// The card network's confirmation never comes before the kill: the debit has
		// committed, the answer and the idempotency record's completion are still to do.
		this.victim = startDemo(victimPort, "--demo.payments.gateway-delay=5m");
		awaitUp(victimPort);

		HttpClient client = HttpClient.newHttpClient();
		CompletableFuture<HttpResponse<String>> lost = client
			.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + victimPort + "/api/payments"))
				.header("Content-Type", "application/json")
				.header("Idempotency-Key", key)
				.POST(HttpRequest.BodyPublishers.ofString("{\"orderNo\":\"" + orderNo + "\"}"))
				.build(), HttpResponse.BodyHandlers.ofString());
		await().atMost(Duration.ofSeconds(30)).until(() -> paymentId(orderNo) != null);
		this.victim.destroyForcibly();
		assertThat(this.victim.waitFor(10, TimeUnit.SECONDS)).isTrue();
		assertThat(lost).failsWithin(Duration.ofSeconds(10));

		Response retry = this.survivor.pay(orderNo, key);
		assertThat(retry.status()).as("the retry: %s; victim's log:%n%s", retry.body(), victimLogTail()).isEqualTo(201);
		assertThat(retry.replayed()).isFalse();
		assertThat(retry.json().get("paymentId").asString()).isEqualTo(paymentId(orderNo));
		assertThat(this.survivor.balance(account)).isEqualTo(600);
		assertThat(this.jdbc.sql("SELECT COUNT(*) FROM ledger_entries WHERE order_no = ?")
			.param(orderNo)
			.query(Long.class)
			.single()).isOne();

		Response replay = this.survivor.pay(orderNo, key).expect(201);
		assertThat(replay.replayed()).isTrue();
		assertThat(replay.body()).isEqualTo(retry.body());
	}

	private String paymentId(String orderNo) {
		return this.jdbc.sql("SELECT id FROM ledger_entries WHERE order_no = ? AND kind = 'PAYMENT'")
			.param(orderNo)
			.query(String.class)
			.optional()
			.orElse(null);
	}

	/**
	 * The demo in a JVM of its own, on this test's classpath, sharing this test's
	 * database, Redis and key prefix.
	 */
	private Process startDemo(int port, String... arguments) throws IOException {
		List<String> command = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java"),
				"-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"),
				DemoApplication.class.getName(), "--spring.profiles.active=postgres", "--server.port=" + port,
				"--idempotent.lease=" + LEASE, "--spring.main.banner-mode=off", "--logging.level.root=warn",
				"--logging.level.io.github.idempotent=info"));
		command.addAll(List.of(arguments));
		return new ProcessBuilder(command).redirectErrorStream(true)
			.redirectOutput(ProcessBuilder.Redirect.to(this.victimLog.toFile()))
			.start();
	}

	private void awaitUp(int port) {
		DemoHttp victim = new DemoHttp(port);
		await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(500)).ignoreExceptions().until(() -> {
			assertThat(this.victim.isAlive()).as("the victim's log:%n%s", victimLogTail()).isTrue();
			return victim.get("/api/accounts/1").status() == 200;
		});
	}

	private String victimLogTail() {
		try {
			List<String> lines = Files.readAllLines(this.victimLog);
			return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private static int freePort() throws IOException {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
	}

}
