package io.github.idempotent.autoconfigure;

import javax.sql.DataSource;

import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.jdbc.init.DataSourceScriptDatabaseInitializer;
import org.springframework.boot.sql.init.dependency.DatabaseInitializationDependencyConfigurer;
import org.springframework.boot.sql.init.dependency.DependsOnDatabaseInitialization;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.jdbc.core.JdbcOperations;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.ResourceTransactionManager;

import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.jdbc.JdbcIdempotencyPurger;
import io.github.idempotent.store.jdbc.JdbcIdempotencyStore;

/**
 * The JDBC store, when {@code idempotent.store.type=jdbc}: never chosen by {@code auto}.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass({ JdbcTemplate.class, DataSourceScriptDatabaseInitializer.class })
@ConditionalOnSingleCandidate(DataSource.class)
@ConditionalOnProperty(name = "idempotent.store.type", havingValue = "jdbc")
@EnableConfigurationProperties(IdempotentJdbcProperties.class)
@Import(DatabaseInitializationDependencyConfigurer.class)
class JdbcStoreConfiguration {

	/** Once the database's initializers have run; a missing table fails the start-up. */
	@Bean
	@ConditionalOnMissingBean(IdempotencyStore.class)
	@DependsOnDatabaseInitialization
	JdbcIdempotencyStore jdbcIdempotencyStore(DataSource dataSource, IdempotentJdbcProperties jdbc,
			ObjectProvider<JdbcOperations> jdbcOperations,
			ObjectProvider<PlatformTransactionManager> transactionManager) {
		JdbcIdempotencyStore store = new JdbcIdempotencyStore(dataSource, jdbcOperations(jdbcOperations, dataSource),
				transactionManager(transactionManager, dataSource), jdbc.getTableName(),
				JdbcIdempotencyStore.detectDialect(dataSource));
		store.setJoinTransaction(jdbc.isJoinTransaction());
		if (jdbc.getClaimReadsFirst() != null) {
			store.setClaimReadsFirst(jdbc.getClaimReadsFirst());
		}
		store.checkTable();
		return store;
	}

	private static JdbcOperations jdbcOperations(ObjectProvider<JdbcOperations> candidates, DataSource dataSource) {
		JdbcOperations jdbc = candidates.getIfUnique();
		return (jdbc instanceof JdbcTemplate template && template.getDataSource() == dataSource) ? jdbc
				: new JdbcTemplate(dataSource);
	}

	/**
	 * Not a JPA one, whose new transactions would open an entity manager for each claim.
	 */
	private static PlatformTransactionManager transactionManager(ObjectProvider<PlatformTransactionManager> candidates,
			DataSource dataSource) {
		PlatformTransactionManager manager = candidates.getIfUnique();
		return (manager instanceof ResourceTransactionManager resources && resources.getResourceFactory() == dataSource)
				? manager : new DataSourceTransactionManager(dataSource);
	}

	@Bean
	@ConditionalOnMissingBean
	JdbcIdempotencySchemaInitializer jdbcIdempotencySchemaInitializer(DataSource dataSource,
			IdempotentJdbcProperties properties) {
		return new JdbcIdempotencySchemaInitializer(dataSource, properties);
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(JdbcIdempotencyStore.class)
	JdbcIdempotencyPurger jdbcIdempotencyPurger(JdbcIdempotencyStore store, IdempotentJdbcProperties jdbc) {
		return new JdbcIdempotencyPurger(store, jdbc.getPurgeInterval(), jdbc.getPurgeBatchSize());
	}

}
