package io.github.idempotent.autoconfigure;

import javax.sql.DataSource;

import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.jdbc.init.DataSourceScriptDatabaseInitializer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;

import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.jdbc.JdbcIdempotencyPurger;
import io.github.idempotent.store.jdbc.JdbcIdempotencyStore;

/**
 * The JDBC store, when {@code idempotent.store.type=jdbc} and the application has one
 * {@link DataSource}: never chosen by {@code auto}, since a table has to be planned for.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass({ JdbcTemplate.class, DataSourceScriptDatabaseInitializer.class })
@ConditionalOnSingleCandidate(DataSource.class)
@ConditionalOnProperty(name = "idempotent.store.type", havingValue = "jdbc")
class JdbcStoreConfiguration {

	@Bean
	@ConditionalOnMissingBean(IdempotencyStore.class)
	JdbcIdempotencyStore jdbcIdempotencyStore(DataSource dataSource, IdempotentProperties properties) {
		IdempotentProperties.Jdbc jdbc = properties.getStore().getJdbc();
		JdbcIdempotencyStore store = new JdbcIdempotencyStore(dataSource, jdbc.getTableName());
		store.setJoinTransaction(jdbc.isJoinTransaction());
		return store;
	}

	@Bean
	@ConditionalOnMissingBean
	JdbcIdempotencySchemaInitializer jdbcIdempotencySchemaInitializer(DataSource dataSource,
			IdempotentProperties properties) {
		return new JdbcIdempotencySchemaInitializer(dataSource, properties.getStore().getJdbc());
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(JdbcIdempotencyStore.class)
	JdbcIdempotencyPurger jdbcIdempotencyPurger(JdbcIdempotencyStore store, IdempotentProperties properties) {
		IdempotentProperties.Jdbc jdbc = properties.getStore().getJdbc();
		return new JdbcIdempotencyPurger(store, jdbc.getPurgeInterval(), jdbc.getPurgeBatchSize());
	}

}
