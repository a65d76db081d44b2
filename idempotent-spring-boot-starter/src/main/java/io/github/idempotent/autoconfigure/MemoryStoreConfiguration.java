package io.github.idempotent.autoconfigure;

import javax.sql.DataSource;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.util.unit.DataSize;

import io.github.idempotent.autoconfigure.IdempotentProperties.StoreType;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.memory.InMemoryIdempotencyStore;

/**
 * The in-memory store, when no other store applies; a store type that could not be set up
 * fails with what is missing.
 */
@Configuration(proxyBeanMethods = false)
class MemoryStoreConfiguration {

	private static final Log logger = LogFactory.getLog(MemoryStoreConfiguration.class);

	@Bean
	@ConditionalOnMissingBean(IdempotencyStore.class)
	InMemoryIdempotencyStore inMemoryIdempotencyStore(IdempotentProperties properties,
			ListableBeanFactory beanFactory) {
		StoreType type = properties.getStore().getType();
		switch (type) {
			case AUTO -> logger.warn("No RedisConnectionFactory found: @Idempotent keeps its records in memory, "
					+ "so duplicates that reach another instance or arrive after a restart run again. "
					+ whereToKeepRecords(beanFactory));
			case MEMORY -> {
			}
			case REDIS -> throw new IllegalStateException("idempotent.store.type=redis but there is no "
					+ "RedisConnectionFactory: add spring-boot-starter-data-redis and configure spring.data.redis.*");
			case JDBC -> throw new IllegalStateException("idempotent.store.type=jdbc but there is no single "
					+ "DataSource: add spring-boot-starter-jdbc and configure spring.datasource.*");
		}
		IdempotentMemoryProperties memory = properties.getStore().getMemory();
		long maximumSize = memory.getMaximumSize().toBytes();
		DataSize perScope = memory.getMaximumSizePerScope();
		return new InMemoryIdempotencyStore(memory.getMaximumRecords(), maximumSize,
				(perScope != null) ? perScope.toBytes() : maximumSize,
				InMemoryIdempotencyStore.DEFAULT_TAKEOVER_MEMORY);
	}

	/** An application with a database is told to keep its records there. */
	private static String whereToKeepRecords(ListableBeanFactory beanFactory) {
		if (beanFactory.getBeanNamesForType(DataSource.class, false, false).length > 0) {
			return "This application has a DataSource: set idempotent.store.type=jdbc to keep them in its "
					+ "database (docs/stores.md, 'JDBC without Redis'), or idempotent.store.type=memory to silence this";
		}
		return "Add spring-boot-starter-data-redis (or set idempotent.store.type=memory to silence this)";
	}

}
