package io.github.idempotent.store.jdbc;

import javax.sql.DataSource;

import liquibase.exception.LiquibaseException;
import liquibase.integration.spring.SpringLiquibase;
import org.flywaydb.core.Flyway;

import org.springframework.core.io.DefaultResourceLoader;

/**
 * The migrations the starter ships, run by Flyway and Liquibase as an application that
 * names them runs them (Spring Boot's auto-configurations use the same two entry points).
 */
enum ShippedMigrations {

	FLYWAY {
		@Override
		void apply(DataSource dataSource, JdbcDialect dialect) {
			// As an application sets it whose schema has tables from before Flyway
			// (spring.flyway.baseline-on-migrate); a new schema needs no baseline.
			Flyway.configure()
				.dataSource(dataSource)
				.baselineOnMigrate(true)
				.locations(JdbcDialect.flywayLocation(dialect.getPlatform()))
				.load()
				.migrate();
		}
	},

	LIQUIBASE {
		@Override
		void apply(DataSource dataSource, JdbcDialect dialect) {
			SpringLiquibase liquibase = new SpringLiquibase();
			liquibase.setDataSource(dataSource);
			liquibase.setResourceLoader(new DefaultResourceLoader());
			liquibase.setChangeLog("classpath:" + JdbcDialect.LIQUIBASE_CHANGELOG);
			try {
				liquibase.afterPropertiesSet();
			}
			catch (LiquibaseException ex) {
				throw new IllegalStateException(ex);
			}
		}
	};

	/**
	 * Creates the table {@value JdbcIdempotencyStore#DEFAULT_TABLE_NAME} in the schema of
	 * {@code dataSource}'s connections, or does nothing when the migration ran there.
	 */
	abstract void apply(DataSource dataSource, JdbcDialect dialect);

}
