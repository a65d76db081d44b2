package io.github.idempotent.web;

import java.net.http.HttpResponse;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import javax.sql.DataSource;

import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.transaction.support.TransactionTemplate;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.core.FailureMode;
import io.github.idempotent.testsupport.TestDatabases;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A JDBC store that answered but refused a step is not a store that is down, through HTTP
 * against a real application, in both failure modes: a storm of concurrent duplicates of
 * many keys whatever the pool's isolation level (PostgreSQL refused concurrent first
 * claims with serialization failures at REPEATABLE READ and SERIALIZABLE: 503s while it
 * was up, or keys run two to four times under {@code failure-mode=open}); a duplicate
 * whose claim times out behind the completion that a caller's open transaction holds
 * ({@code join-transaction=true}) is in progress, not an outage (a second run, a 503) nor
 * Boot's bare 500; and a full disk or table is "full" (503), never a reason to run a call
 * unprotected. Executions are counted by a ledger outside the store. Subclasses say which
 * database, and how its pool's isolation and timeouts are set.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class AbstractJdbcRefusalHttpTests {

	private static final int KEYS = 20;

	private static final int CALLS_PER_KEY = 6;

	private static final String TRANSFER = "{\"from\":\"acc-1\",\"to\":\"acc-2\",\"amount\":125}";

	/**
	 * Executions by key: the ledger outside the store.
	 */
	private static final Map<String, AtomicInteger> executions = new ConcurrentHashMap<>();

	private static final Hold hold = new Hold();

	/**
	 * The database's URL, user and password, as {@code spring.datasource.*} properties.
	 */
	protected abstract List<String> datasource(String url);

	protected abstract String url();

	/**
	 * The ways the pool's connections get a default isolation level other than the
	 * database's own: each a name and the properties (or URL parameters) that set it.
	 */
	protected abstract Stream<Isolation> isolations();

	/**
	 * The timeouts a duplicate can meet behind a joined transaction's completion: each a
	 * name and the application's properties that set it on every connection of the pool.
	 */
	protected abstract Stream<Arguments> timeouts();

	/**
	 * Statements that make every INSERT into {@code table} fail as a full disk or table
	 * does, and the statements that undo them.
	 */
	protected abstract List<String> fill(String table);

	protected abstract List<String> unfill(String table);

	Stream<Arguments> isolationsInEachFailureMode() {
		return isolations()
			.flatMap((isolation) -> Stream.of(FailureMode.values()).map((mode) -> Arguments.of(isolation, mode)));
	}

	Stream<Arguments> timeoutsInEachFailureMode() {
		return timeouts().flatMap((timeout) -> Stream.of(FailureMode.values())
			.map((mode) -> Arguments.of(timeout.get()[0], timeout.get()[1], mode)));
	}

	static Stream<FailureMode> failureModes() {
		return Stream.of(FailureMode.values());
	}

	@ParameterizedTest(name = "{0}, failure-mode={1}")
	@MethodSource("isolationsInEachFailureMode")
	void aStormRunsEveryKeyOnceWhateverThePoolsIsolation(Isolation isolation, FailureMode mode) throws Exception {
		List<String> properties = new ArrayList<>(isolation.properties());
		properties.add("idempotent.failure-mode=" + mode.name().toLowerCase());
		run(isolation.urlParameters(), properties, (context, port) -> {
			try (Connection connection = context.getBean(DataSource.class).getConnection()) {
				assertThat(connection.getTransactionIsolation()).as("the pool's isolation")
					.isEqualTo(isolation.level());
			}
			Map<String, List<HttpResponse<String>>> answers = new HttpStorm("/transfers", port).run(KEYS, CALLS_PER_KEY,
					1, TRANSFER);
			System.out.println("Storm of " + KEYS + " keys x " + CALLS_PER_KEY + ", " + isolation + ", " + mode + ": "
					+ HttpStorm.statuses(answers));
			HttpStorm.assertRanOnceAndReplayed(answers, AbstractJdbcRefusalHttpTests::executions, 2);
		});
	}

	@ParameterizedTest(name = "{0}, failure-mode={2}")
	@MethodSource("timeoutsInEachFailureMode")
	void aDuplicateThatTimesOutBehindAnOpenTransactionIsInProgress(String timeout, List<String> settings,
			FailureMode mode) throws Exception {
		List<String> properties = new ArrayList<>(settings);
		properties.addAll(List.of("idempotent.failure-mode=" + mode.name().toLowerCase(),
				"idempotent.store.jdbc.join-transaction=true", "idempotent.retry-after=3s"));
		run("", properties, (context, port) -> {
			HttpStorm http = new HttpStorm("/held-transfers", port);
			String key = UUID.randomUUID().toString();
			hold.reset();
			CompletableFuture<HttpResponse<String>> first = CompletableFuture.supplyAsync(() -> post(http, port, key));
			assertThat(hold.awaitHolding()).as("the first call's transaction holds its completion").isTrue();
			HttpResponse<String> duplicate;
			try {
				duplicate = http.post(port, key, TRANSFER);
			}
			finally {
				hold.release();
			}
			assertThat(first.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
			HttpResponse<String> retry = http.post(port, key, TRANSFER);

			assertThat(executions(key)).as("executions").isOne();
			assertThat(duplicate.statusCode()).as(duplicate.body()).isEqualTo(409);
			assertThat(duplicate.headers().firstValue("Retry-After")).hasValue("3");
			assertThat(duplicate.body()).contains("urn:idempotent:in-progress").doesNotContain("Exception");
			// The service's stored result, in a response the handler built again.
			assertThat(retry.statusCode()).isEqualTo(200);
			assertThat(retry.body()).isEqualTo(first.get().body());
		});
	}

	@ParameterizedTest(name = "failure-mode={0}")
	@MethodSource("failureModes")
	void aFullStoreRefusesTheKeyAndRunsNothing(FailureMode mode) throws Exception {
		run("", List.of("idempotent.failure-mode=" + mode.name().toLowerCase(), "idempotent.retry-after=3s"),
				(context, port) -> {
					JdbcTemplate jdbc = new JdbcTemplate(context.getBean(DataSource.class));
					String table = context.getEnvironment().getProperty("idempotent.store.jdbc.table-name");
					HttpStorm http = new HttpStorm("/transfers", port);
					String key = UUID.randomUUID().toString();
					fill(table).forEach(jdbc::execute);
					HttpResponse<String> refused;
					try {
						refused = http.post(port, key, TRANSFER);
					}
					finally {
						unfill(table).forEach(jdbc::execute);
					}
					assertThat(executions(key)).as("executions while full").isZero();
					assertThat(refused.statusCode()).as(refused.body()).isEqualTo(503);
					assertThat(refused.headers().firstValue("Retry-After")).hasValue("3");
					assertThat(refused.body()).contains("urn:idempotent:store-full").doesNotContain("Exception");
					// Nothing was left behind: once there is room, the key runs.
					assertThat(http.post(port, key, TRANSFER).statusCode()).isEqualTo(200);
					assertThat(executions(key)).as("executions once there is room").isOne();
				});
	}

	private static HttpResponse<String> post(HttpStorm http, int port, String key) {
		try {
			return http.post(port, key, TRANSFER);
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

	static int executions(String key) {
		AtomicInteger count = executions.get(key);
		return (count != null) ? count.get() : 0;
	}

	/**
	 * Starts the application on a table of its own with {@code properties}, runs
	 * {@code test} against it, stops it and drops the table.
	 */
	private void run(String urlParameters, List<String> properties, ApplicationTest test) throws Exception {
		String table = TestDatabases.uniqueTableName("idem_refusal");
		String url = url() + (urlParameters.isEmpty() ? "" : (url().contains("?") ? "&" : "?") + urlParameters);
		List<String> all = new ArrayList<>(datasource(url));
		all.addAll(properties);
		all.addAll(List.of("idempotent.store.type=jdbc", "idempotent.store.jdbc.table-name=" + table,
				"idempotent.store.jdbc.initialize-schema=always", "server.port=0", "server.address=127.0.0.1",
				"spring.main.banner-mode=off"));
		ConfigurableApplicationContext context = new SpringApplicationBuilder(RefusalApplication.class)
			.properties(all.toArray(String[]::new))
			.run();
		try {
			test.run(context, ((WebServerApplicationContext) context).getWebServer().getPort());
		}
		finally {
			try {
				new JdbcTemplate(context.getBean(DataSource.class)).execute("DROP TABLE IF EXISTS " + table);
			}
			finally {
				SpringApplication.exit(context);
			}
		}
	}

	interface ApplicationTest {

		void run(ConfigurableApplicationContext context, int port) throws Exception;

	}

	/**
	 * A default isolation level of the pool's connections, set by {@code properties} of
	 * the application or by parameters of its URL.
	 */
	record Isolation(String name, int level, String urlParameters, List<String> properties) {

		/**
		 * The pool's own setting (Hikari's {@code transaction-isolation}) of
		 * {@code level}, a constant of {@link Connection} without its prefix.
		 */
		static Isolation pool(String level, int value) {
			return new Isolation("pool at " + level, value, "",
					List.of("spring.datasource.hikari.transaction-isolation=TRANSACTION_" + level));
		}

		@Override
		public String toString() {
			return this.name;
		}

	}

	/**
	 * Holds the first held transfer's transaction open after its method returned (its
	 * completion written in it, and its row locked) until the test releases it.
	 */
	static final class Hold {

		private volatile CountDownLatch holding = new CountDownLatch(1);

		private volatile CountDownLatch released = new CountDownLatch(1);

		private final AtomicBoolean first = new AtomicBoolean();

		void reset() {
			this.holding = new CountDownLatch(1);
			this.released = new CountDownLatch(1);
			this.first.set(false);
		}

		boolean awaitHolding() throws InterruptedException {
			return this.holding.await(20, TimeUnit.SECONDS);
		}

		void release() {
			this.released.countDown();
		}

		void holdFirst() {
			if (this.first.compareAndSet(false, true)) {
				this.holding.countDown();
				try {
					this.released.await(30, TimeUnit.SECONDS);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
			}
		}

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import({ TransferController.class, Charges.class })
	static class RefusalApplication {

		@Bean
		SecurityFilterChain securityFilterChain(HttpSecurity http) throws Exception {
			return http.csrf((csrf) -> csrf.disable())
				.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll())
				.build();
		}

	}

	record TransferRequest(String from, String to, long amount) {
	}

	record Transfer(String id, String from, String to, long amount) {
	}

	/**
	 * A charge guarded on its own bean, inside the transaction of the controller that
	 * calls it.
	 */
	static class Charges {

		@Idempotent(key = "#key")
		public String charge(String key) {
			return "charged-" + executions.computeIfAbsent(key, (k) -> new AtomicInteger()).incrementAndGet();
		}

	}

	@RestController
	static class TransferController {

		private final Charges charges;

		private final TransactionTemplate transactions;

		TransferController(Charges charges, TransactionTemplate transactions) {
			this.charges = charges;
			this.transactions = transactions;
		}

		@PostMapping("/transfers")
		@Idempotent
		Transfer transfer(@RequestBody TransferRequest request, @RequestHeader("Idempotency-Key") String key)
				throws InterruptedException {
			executions.computeIfAbsent(key, (k) -> new AtomicInteger()).incrementAndGet();
			Thread.sleep(200);
			return new Transfer(UUID.randomUUID().toString(), request.from(), request.to(), request.amount());
		}

		/**
		 * The charge, then more work in the same transaction: with
		 * {@code join-transaction=true} its completion is written in that transaction,
		 * whose commit comes later.
		 */
		@PostMapping("/held-transfers")
		String heldTransfer(@RequestHeader("Idempotency-Key") String key) {
			return this.transactions.execute((status) -> {
				String charged = this.charges.charge(key);
				hold.holdFirst();
				return charged;
			});
		}

	}

}
