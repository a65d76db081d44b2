package io.github.idempotent.store.jdbc;

import java.time.Duration;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.init.ResourceDatabasePopulator;
import org.springframework.core.io.ByteArrayResource;

import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.StoredResult;
import io.github.idempotent.testsupport.TestDatabases;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The shipped migrations on each database, each run in a schema of its own (the table
 * name is fixed there): the store claims, completes and replays on the table they create,
 * and they leave alone a table the store's initializer created before them, as an
 * application that moves from {@code initialize-schema} to its migrations has.
 */
abstract class AbstractShippedMigrationsTests {

	private static final Fingerprint FP = new Fingerprint("fp");

	private static final Duration LEASE = Duration.ofMinutes(1);

	private HikariDataSource server;

	private String schema;

	private HikariDataSource dataSource;

	protected abstract HikariDataSource connect();

	protected abstract JdbcDialect dialect();

	/**
	 * The URL of {@code server}'s database with {@code schema} as the connections' own.
	 */
	protected abstract String urlOf(String serverUrl, String schema);

	protected abstract String createSchema(String schema);

	protected abstract String dropSchema(String schema);

	@BeforeEach
	void createSchema() {
		this.server = connect();
		this.schema = TestDatabases.uniqueTableName("idem_migrations");
		new JdbcTemplate(this.server).execute(createSchema(this.schema));
		this.dataSource = new HikariDataSource();
		this.dataSource.setJdbcUrl(urlOf(this.server.getJdbcUrl(), this.schema));
		this.dataSource.setUsername(this.server.getUsername());
		this.dataSource.setPassword(this.server.getPassword());
	}

	@AfterEach
	void dropSchema() {
		try {
			if (this.dataSource != null) {
				this.dataSource.close();
			}
			new JdbcTemplate(this.server).execute(dropSchema(this.schema));
		}
		finally {
			this.server.close();
		}
	}

	@ParameterizedTest
	@EnumSource(ShippedMigrations.class)
	void theStoreClaimsCompletesAndReplaysOnTheTableOfTheMigration(ShippedMigrations migrations) {
		migrations.apply(this.dataSource, dialect());
		// The next start of the application.
		migrations.apply(this.dataSource, dialect());
		claimCompleteAndReplay();
	}

	@ParameterizedTest
	@EnumSource(ShippedMigrations.class)
	void theMigrationKeepsATableTheInitializerCreated(ShippedMigrations migrations) {
		new ResourceDatabasePopulator(
				new ByteArrayResource(dialect().schema(JdbcIdempotencyStore.DEFAULT_TABLE_NAME).getBytes()))
			.execute(this.dataSource);
		JdbcIdempotencyStore store = new JdbcIdempotencyStore(this.dataSource, JdbcIdempotencyStore.DEFAULT_TABLE_NAME);
		RecordKey key = new RecordKey("before-the-migration");
		assertThat(store.claim(key, FP, LEASE)).isInstanceOf(ClaimResult.Acquired.class);
		migrations.apply(this.dataSource, dialect());
		assertThat(store.claim(key, FP, LEASE)).isInstanceOf(ClaimResult.InProgress.class);
		claimCompleteAndReplay();
	}

	private void claimCompleteAndReplay() {
		JdbcIdempotencyStore store = new JdbcIdempotencyStore(this.dataSource, JdbcIdempotencyStore.DEFAULT_TABLE_NAME);
		store.checkTable();
		assertThat(store.getDialect()).isEqualTo(dialect());
		RecordKey key = new RecordKey("idem:_:op:" + "k".repeat(480));
		ClaimResult.Acquired acquired = (ClaimResult.Acquired) store.claim(key, FP, LEASE);
		assertThat(store.claim(key, FP, LEASE)).isInstanceOf(ClaimResult.InProgress.class);
		StoredResult result = new StoredResult(new byte[] { 4, 2 });
		assertThat(store.complete(key, acquired.token(), FP, result, Duration.ofHours(1))).isTrue();
		assertThat(store.claim(key, FP, LEASE)).isEqualTo(new ClaimResult.Completed(FP, result));
		// The key compares byte for byte.
		assertThat(store.claim(new RecordKey(key.value().toUpperCase()), FP, LEASE))
			.isInstanceOf(ClaimResult.Acquired.class);
	}

}
