package io.github.idempotent.autoconfigure;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.jdbc.init.DatabaseInitializationProperties;

/**
 * Configuration of the JDBC store; the schema settings are Spring Boot's. A class of its
 * own, so that {@link IdempotentProperties} loads without Boot's JDBC support.
 */
@ConfigurationProperties("idempotent.store.jdbc")
public class IdempotentJdbcProperties extends DatabaseInitializationProperties {

	/** Name of the table of idempotency records, optionally schema-qualified. */
	private String tableName = "idempotency_record";

	/**
	 * Whether a result completed inside a transaction on the store's DataSource is
	 * written in that transaction.
	 */
	private boolean joinTransaction;

	/** Interval between purges of expired records; zero disables purging. */
	private Duration purgeInterval = Duration.ofMinutes(5);

	/** Largest number of expired records deleted by one purge statement. */
	private int purgeBatchSize = 1000;

	/**
	 * Whether a two-statement claim reads the row before it inserts its placeholder.
	 * Unset: on for MySQL and MariaDB, off for H2.
	 */
	private @Nullable Boolean claimReadsFirst;

	public IdempotentJdbcProperties() {
		// A table that could not be created must stop the start-up.
		setContinueOnError(false);
	}

	@Override
	public String getDefaultSchemaLocation() {
		return "classpath:io/github/idempotent/store/jdbc/schema-@@platform@@.sql";
	}

	public String getTableName() {
		return this.tableName;
	}

	public void setTableName(String tableName) {
		this.tableName = tableName;
	}

	public boolean isJoinTransaction() {
		return this.joinTransaction;
	}

	public void setJoinTransaction(boolean joinTransaction) {
		this.joinTransaction = joinTransaction;
	}

	public Duration getPurgeInterval() {
		return this.purgeInterval;
	}

	public void setPurgeInterval(Duration purgeInterval) {
		this.purgeInterval = purgeInterval;
	}

	public int getPurgeBatchSize() {
		return this.purgeBatchSize;
	}

	public void setPurgeBatchSize(int purgeBatchSize) {
		this.purgeBatchSize = purgeBatchSize;
	}

	public @Nullable Boolean getClaimReadsFirst() {
		return this.claimReadsFirst;
	}

	public void setClaimReadsFirst(@Nullable Boolean claimReadsFirst) {
		this.claimReadsFirst = claimReadsFirst;
	}

}
