package io.github.idempotent.autoconfigure;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

import io.github.idempotent.core.IdempotencyTemplate;
import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.jdbc.JdbcDialect;
import io.github.idempotent.store.jdbc.JdbcIdempotencyPurger;
import io.github.idempotent.store.jdbc.JdbcIdempotencyStore;
import io.github.idempotent.store.memory.InMemoryIdempotencyStore;
import io.github.idempotent.testsupport.RequiresDatabase.Database;
import io.github.idempotent.testsupport.RequiresDatabase;
import io.github.idempotent.testsupport.TestDatabases;

import static org.assertj.core.api.Assertions.assertThat;

class JdbcStoreConfigurationTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class, IdempotentAutoConfiguration.class))
		// Calls on the test thread have no caller: Spring Security is on the class path.
		.withPropertyValues("idempotent.default-scope=global");

	@Test
	void jdbcTypeWithADataSourceUsesTheJdbcStoreAndCreatesTheTableOfAnEmbeddedDatabase() {
		this.contextRunner.withPropertyValues("idempotent.store.type=jdbc").run((context) -> {
			assertThat(context).hasSingleBean(JdbcIdempotencyStore.class).hasSingleBean(IdempotencyStore.class);
			JdbcIdempotencyStore store = context.getBean(JdbcIdempotencyStore.class);
			assertThat(store.getDialect()).isEqualTo(JdbcDialect.H2);
			assertThat(store.isJoinTransaction()).isFalse();
			assertThat(rows(context.getBean(DataSource.class), "idempotency_record")).isZero();
			assertThat(context.getBean(JdbcIdempotencyPurger.class).isRunning()).isTrue();
		});
	}

	@Test
	void theStoreRunsOnTheApplicationsJdbcTemplateAndTransactionManager() {
		this.contextRunner.withPropertyValues("idempotent.store.type=jdbc")
			.withBean(CountingJdbcTemplate.class)
			.withBean(CountingTransactionManager.class)
			.run((context) -> {
				IdempotencyStore store = context.getBean(IdempotencyStore.class);
				CountingJdbcTemplate jdbc = context.getBean(CountingJdbcTemplate.class);
				CountingTransactionManager transactions = context.getBean(CountingTransactionManager.class);
				RecordKey key = new RecordKey("test:" + UUID.randomUUID());
				int statementsBefore = jdbc.statements.get();
				store.claim(key, new Fingerprint("fp"), Duration.ofSeconds(30));
				assertThat(jdbc.statements.get()).isGreaterThan(statementsBefore);
				// Inside a transaction of the data source, a claim commits in one of its
				// own.
				new TransactionTemplate(transactions).executeWithoutResult((status) -> store
					.claim(new RecordKey("test:" + UUID.randomUUID()), new Fingerprint("fp"), Duration.ofSeconds(30)));
				assertThat(transactions.begun.get()).isEqualTo(2);
			});
	}

	@Test
	void aTransactionManagerOfAnotherResourceIsNotUsedForTheStoresOwnTransactions() {
		this.contextRunner.withPropertyValues("idempotent.store.type=jdbc")
			.withBean("otherDataSourceTransactions", CountingTransactionManager.class,
					() -> new CountingTransactionManager(new SimpleDriverDataSource()))
			.run((context) -> assertThat(context).hasNotFailed().hasSingleBean(JdbcIdempotencyStore.class));
	}

	static class CountingJdbcTemplate extends JdbcTemplate {

		final AtomicInteger statements = new AtomicInteger();

		CountingJdbcTemplate(DataSource dataSource) {
			super(dataSource);
		}

		@Override
		public int update(String sql, @Nullable Object... args) {
			this.statements.incrementAndGet();
			return super.update(sql, args);
		}

	}

	static class CountingTransactionManager extends DataSourceTransactionManager {

		final AtomicInteger begun = new AtomicInteger();

		CountingTransactionManager(DataSource dataSource) {
			super(dataSource);
		}

		@Override
		protected void doBegin(Object transaction, TransactionDefinition definition) {
			this.begun.incrementAndGet();
			super.doBegin(transaction, definition);
		}

	}

	@Test
	void tableNameAndJoinTransactionAreConfigurable() {
		this.contextRunner
			.withPropertyValues("idempotent.store.type=jdbc", "idempotent.store.jdbc.table-name=my_records",
					"idempotent.store.jdbc.join-transaction=true")
			.run((context) -> {
				JdbcIdempotencyStore store = context.getBean(JdbcIdempotencyStore.class);
				assertThat(store.getTableName()).isEqualTo("my_records");
				assertThat(store.isJoinTransaction()).isTrue();
				assertThat(rows(context.getBean(DataSource.class), "my_records")).isZero();
			});
	}

	@Test
	@RequiresDatabase(Database.MARIADB)
	void onMariaDbTheClaimReadsFirstUnlessConfiguredToInsertFirst() {
		String table = TestDatabases.uniqueTableName("idem_order");
		try (var mariadb = TestDatabases.mariadb()) {
			ApplicationContextRunner runner = this.contextRunner
				.withBean(DataSource.class, () -> new DelegatingDataSource(mariadb))
				.withPropertyValues("idempotent.store.type=jdbc", "idempotent.store.jdbc.table-name=" + table,
						"idempotent.store.jdbc.initialize-schema=always");
			try {
				runner.run((context) -> assertThat(context.getBean(JdbcIdempotencyStore.class).isClaimReadsFirst())
					.isTrue());
				runner.withPropertyValues("idempotent.store.jdbc.claim-reads-first=false").run((context) -> {
					JdbcIdempotencyStore store = context.getBean(JdbcIdempotencyStore.class);
					assertThat(store.isClaimReadsFirst()).isFalse();
					RecordKey key = new RecordKey("order:" + UUID.randomUUID());
					Fingerprint fingerprint = new Fingerprint("fp");
					assertThat(store.claim(key, fingerprint, Duration.ofSeconds(30)))
						.isInstanceOf(ClaimResult.Acquired.class);
					assertThat(store.claim(key, fingerprint, Duration.ofSeconds(30)))
						.isInstanceOf(ClaimResult.InProgress.class);
				});
			}
			finally {
				new JdbcTemplate(mariadb).execute("DROP TABLE IF EXISTS " + table);
			}
		}
	}

	@Test
	void claimReadsFirstIsOffOnH2UnlessConfigured() {
		this.contextRunner.withPropertyValues("idempotent.store.type=jdbc")
			.run((context) -> assertThat(context.getBean(JdbcIdempotencyStore.class).isClaimReadsFirst()).isFalse());
		this.contextRunner
			.withPropertyValues("idempotent.store.type=jdbc", "idempotent.store.jdbc.claim-reads-first=true")
			.run((context) -> assertThat(context.getBean(JdbcIdempotencyStore.class).isClaimReadsFirst()).isTrue());
	}

	@Test
	void initializeSchemaNeverLeavesTheDatabaseAloneAndTheMissingTableFailsTheStartUp() {
		try (var h2 = TestDatabases.h2()) {
			this.contextRunner.withBean(DataSource.class, () -> new DelegatingDataSource(h2))
				.withPropertyValues("idempotent.store.type=jdbc", "idempotent.store.jdbc.initialize-schema=never")
				.run((context) -> assertThat(context).getFailure()
					.rootCause()
					.hasMessageContaining(
							"The table 'idempotency_record' of the JDBC idempotency store does not exist"));
			assertThat(tableExists(h2, "IDEMPOTENCY_RECORD")).isFalse();
		}
	}

	@Test
	@RequiresDatabase(Database.POSTGRESQL)
	void aMissingTableFailsTheStartUpWithTheTableTheDatabaseAndWhatToDo() {
		String table = TestDatabases.uniqueTableName("idem_missing");
		try (var postgresql = TestDatabases.postgresql()) {
			// What docs/stores.md once showed: a server database with initialize-schema
			// embedded, which creates nothing there.
			this.contextRunner.withBean(DataSource.class, () -> new DelegatingDataSource(postgresql))
				.withPropertyValues("idempotent.store.type=jdbc", "idempotent.store.jdbc.table-name=" + table,
						"idempotent.store.jdbc.initialize-schema=embedded")
				.run((context) -> assertThat(context).getFailure()
					.rootCause()
					.hasMessageContaining("The table '" + table + "' of the JDBC idempotency store does not exist in "
							+ "PostgreSQL database '" + databaseName(TestDatabases.postgresqlUrl())
							+ "' schema 'public' at jdbc:postgresql://")
					.hasMessageContaining("io/github/idempotent/store/jdbc/schema-postgresql.sql")
					.hasMessageContaining("idempotent.store.jdbc.initialize-schema=always"));
		}
	}

	@Test
	void aTableWithoutAColumnOfTheStoreFailsTheStartUp() {
		try (var h2 = TestDatabases.h2()) {
			new JdbcTemplate(h2).execute("CREATE TABLE idempotency_record (idempotency_key VARCHAR(512) PRIMARY KEY, "
					+ "state CHAR(1), owner_token VARCHAR(64), fingerprint VARCHAR(255), expires_at TIMESTAMP)");
			this.contextRunner.withBean(DataSource.class, () -> new DelegatingDataSource(h2))
				.withPropertyValues("idempotent.store.type=jdbc", "idempotent.store.jdbc.initialize-schema=never")
				.run((context) -> assertThat(context).getFailure()
					.rootCause()
					.hasMessageContaining("The table 'idempotency_record' of the JDBC idempotency store in H2")
					.hasMessageContaining("lacks the column(s) [result]"));
		}
	}

	@Test
	void aTableDroppedWhileRunningLetsCallsRunUnprotectedUnderFailureModeOpen() {
		this.contextRunner.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class))
			.withPropertyValues("idempotent.store.type=jdbc", "idempotent.failure-mode=open")
			.run((context) -> {
				new JdbcTemplate(context.getBean(DataSource.class)).execute("DROP TABLE idempotency_record");
				IdempotencyTemplate template = context.getBean(IdempotencyTemplate.class);
				AtomicInteger runs = new AtomicInteger();
				for (int i = 0; i < 2; i++) {
					assertThat(template.operation("payments")
						.key("order-1")
						.execute(String.class, () -> "receipt-" + runs.incrementAndGet())).startsWith("receipt-");
				}
				assertThat(runs).as("run unprotected, as with a store that cannot be reached").hasValue(2);
			});
	}

	@Test
	void aSchemaScriptOfTheApplicationsOwnReplacesTheShippedOne() {
		this.contextRunner
			.withPropertyValues("idempotent.store.type=jdbc",
					"idempotent.store.jdbc.schema=classpath:io/github/idempotent/autoconfigure/custom-schema.sql")
			.run((context) -> {
				DataSource dataSource = context.getBean(DataSource.class);
				assertThat(tableExists(dataSource, "CUSTOM_SCHEMA_RAN")).isTrue();
				IdempotencyStore store = context.getBean(IdempotencyStore.class);
				assertThat(store.claim(new RecordKey("custom-schema"), new Fingerprint("fp"), Duration.ofSeconds(30)))
					.isInstanceOf(ClaimResult.Acquired.class);
			});
	}

	@Test
	void aSchemaScriptThatFailsStopsTheStartUp() {
		this.contextRunner
			.withPropertyValues("idempotent.store.type=jdbc",
					"idempotent.store.jdbc.schema=classpath:io/github/idempotent/autoconfigure/broken-schema.sql")
			.run((context) -> assertThat(context).getFailure().hasMessageContaining("broken-schema.sql"));
	}

	@Test
	void theStarterStartsWithoutSpringBootsJdbcSupport() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(IdempotentAutoConfiguration.class))
			.withClassLoader(new FilteredClassLoader("org.springframework.boot.jdbc", "org.springframework.jdbc"))
			.withPropertyValues("idempotent.store.jdbc.table-name=unused")
			.run((context) -> assertThat(context).hasNotFailed().hasSingleBean(InMemoryIdempotencyStore.class));
	}

	@Test
	@RequiresDatabase(Database.POSTGRESQL)
	void initializeSchemaAlwaysCreatesTheTableOfAServerDatabaseOnlyOnce() {
		String table = TestDatabases.uniqueTableName("idem_init");
		try (var postgresql = TestDatabases.postgresql()) {
			try {
				ApplicationContextRunner runner = this.contextRunner
					// not the pool itself: each context would close it
					.withBean(DataSource.class, () -> new DelegatingDataSource(postgresql))
					.withPropertyValues("idempotent.store.type=jdbc", "idempotent.store.jdbc.table-name=" + table);
				runner.run((context) -> {
					assertThat(context).getFailure().rootCause().hasMessageContaining("does not exist");
					assertThat(tableExists(postgresql, table)).as("embedded only by default").isFalse();
				});
				runner.withPropertyValues("idempotent.store.jdbc.initialize-schema=always")
					.run((context) -> assertThat(rows(postgresql, table)).isZero());
				// A second start finds the table and keeps it.
				runner.withPropertyValues("idempotent.store.jdbc.initialize-schema=always")
					.run((context) -> assertThat(context).hasNotFailed());
			}
			finally {
				new JdbcTemplate(postgresql).execute("DROP TABLE IF EXISTS " + table);
			}
		}
	}

	@Test
	@RequiresDatabase(Database.POSTGRESQL)
	void aSchemaQualifiedTableIsCreatedAndUsed() {
		String schema = TestDatabases.uniqueTableName("idem_schema");
		try (var postgresql = TestDatabases.postgresql()) {
			JdbcTemplate jdbc = new JdbcTemplate(postgresql);
			jdbc.execute("CREATE SCHEMA " + schema);
			try {
				this.contextRunner.withBean(DataSource.class, () -> new DelegatingDataSource(postgresql))
					.withPropertyValues("idempotent.store.type=jdbc",
							"idempotent.store.jdbc.table-name=" + schema + ".records",
							"idempotent.store.jdbc.initialize-schema=always")
					.run((context) -> {
						IdempotencyStore store = context.getBean(IdempotencyStore.class);
						RecordKey key = new RecordKey("schema-test:" + schema);
						assertThat(store.claim(key, new Fingerprint("fp"), Duration.ofSeconds(30)))
							.isInstanceOf(ClaimResult.Acquired.class);
						assertThat(rows(postgresql, schema + ".records")).isOne();
						assertThat(jdbc.queryForObject(
								"SELECT COUNT(*) FROM pg_indexes WHERE schemaname = ? AND indexname = 'records_expires_at_idx'",
								Integer.class, schema))
							.isOne();
					});
			}
			finally {
				jdbc.execute("DROP SCHEMA " + schema + " CASCADE");
			}
		}
	}

	@Test
	void zeroPurgeIntervalSchedulesNoPurge() {
		this.contextRunner.withPropertyValues("idempotent.store.type=jdbc", "idempotent.store.jdbc.purge-interval=0")
			.run((context) -> assertThat(context.getBean(JdbcIdempotencyPurger.class).isRunning()).isFalse());
	}

	@Test
	void jdbcTypeWithoutADataSourceFailsWithWhatIsMissing() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(IdempotentAutoConfiguration.class))
			.withPropertyValues("idempotent.store.type=jdbc")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("idempotent.store.type=jdbc but there is no single DataSource"));
	}

	@Test
	void jdbcTypeWithoutSpringJdbcFailsWithWhatIsMissing() {
		this.contextRunner.withClassLoader(new FilteredClassLoader(JdbcTemplate.class))
			.withBean(DataSource.class, TestDatabases::h2)
			.withPropertyValues("idempotent.store.type=jdbc")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("no single DataSource"));
	}

	@Test
	void autoTypeNeverPicksJdbc() {
		this.contextRunner.withPropertyValues("idempotent.store.type=auto", "idempotent.store.jdbc.table-name=unused")
			.run((context) -> {
				assertThat(context).hasSingleBean(InMemoryIdempotencyStore.class)
					.doesNotHaveBean(JdbcIdempotencyStore.class);
				assertThat(tableExists(context.getBean(DataSource.class), "UNUSED")).isFalse();
			});
	}

	private static int rows(DataSource dataSource, String table) {
		return new JdbcTemplate(dataSource).queryForObject("SELECT COUNT(*) FROM " + table, Integer.class);
	}

	private static boolean tableExists(DataSource dataSource, String table) {
		return new JdbcTemplate(dataSource).queryForObject(
				"SELECT COUNT(*) FROM INFORMATION_SCHEMA.TABLES WHERE UPPER(TABLE_NAME) = UPPER(?)", Integer.class,
				table) > 0;
	}

	private static String databaseName(String url) {
		String path = url.substring(url.lastIndexOf('/') + 1);
		int query = path.indexOf('?');
		return (query >= 0) ? path.substring(0, query) : path;
	}

}
