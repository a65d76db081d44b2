package io.github.idempotent.autoconfigure;

import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.util.List;

import javax.sql.DataSource;

import com.github.benmanes.caffeine.cache.Caffeine;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.condition.AnyNestedCondition;
import org.springframework.boot.autoconfigure.condition.ConditionMessage;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.jdbc.init.DataSourceScriptDatabaseInitializer;
import org.springframework.boot.sql.init.dependency.DatabaseInitializationDependencyConfigurer;
import org.springframework.boot.sql.init.dependency.DependsOnDatabaseInitialization;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Primary;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.jdbc.core.JdbcOperations;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.ConfigurableTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.ResourceTransactionManager;
import org.springframework.util.unit.DataSize;

import io.github.idempotent.actuate.RedisMemoryHealthIndicator;
import io.github.idempotent.autoconfigure.IdempotentProperties.StoreType;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.RecordTracking;
import io.github.idempotent.store.cache.CachingIdempotencyStore;
import io.github.idempotent.store.jdbc.JdbcIdempotencyPurger;
import io.github.idempotent.store.jdbc.JdbcIdempotencyStore;
import io.github.idempotent.store.memory.InMemoryIdempotencyStore;
import io.github.idempotent.store.redis.RedisIdempotencyStore;
import io.github.idempotent.store.redis.RedisMemoryPolicy;

/**
 * The stores, imported by {@link IdempotentAutoConfiguration} in this order: Redis, its
 * memory policy, JDBC, memory when no other applies, and the local cache in front.
 */
final class StoreConfigurations {

	private static final Log logger = LogFactory.getLog(StoreConfigurations.class);

	private StoreConfigurations() {
	}

	/** The store types a configuration serves: see {@link OnStoreType}. */
	@Retention(RetentionPolicy.RUNTIME)
	@Conditional(OnStoreType.class)
	@interface ConditionalOnStoreType {

		StoreType[] value();

	}

	/**
	 * {@code idempotent.store.type} read as {@link IdempotentProperties} binds it (auto
	 * when unset): a value with a trailing blank, kept by an application.properties file,
	 * must choose the store it binds to, not another.
	 */
	static final class OnStoreType extends SpringBootCondition {

		@Override
		public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
			List<StoreType> types = List
				.of(metadata.getAnnotations().get(ConditionalOnStoreType.class).getEnumArray("value", StoreType.class));
			StoreType type = Binder.get(context.getEnvironment())
				.bind("idempotent.store.type", StoreType.class)
				.orElse(StoreType.AUTO);
			return new ConditionOutcome(types.contains(type),
					ConditionMessage.forCondition(ConditionalOnStoreType.class, types)
						.because("idempotent.store.type is " + type));
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(RedisConnectionFactory.class)
	@ConditionalOnBean(RedisConnectionFactory.class)
	@ConditionalOnStoreType({ StoreType.AUTO, StoreType.REDIS })
	static class Redis {

		@Bean
		@ConditionalOnMissingBean(IdempotencyStore.class)
		RedisIdempotencyStore redisIdempotencyStore(RedisConnectionFactory connectionFactory,
				IdempotentProperties properties) {
			RedisIdempotencyStore store = new RedisIdempotencyStore(connectionFactory);
			IdempotentRedisProperties redis = properties.store().redis();
			store.setClaimMemoryLimit(redis.claimMemoryLimit());
			if (redis.waitReplicas() > 0) {
				store.setWaitReplicas(redis.waitReplicas(), redis.waitTimeout());
			}
			return store;
		}

	}

	/**
	 * Refuses to start the Redis store on a Redis that may evict its records, unless
	 * accepted, and reports the policy as the health indicator
	 * {@code idempotentRedisMemory}. Reads the store's own factory: the application's
	 * primary may be another Redis.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(RedisConnectionFactory.class)
	@ConditionalOnSingleCandidate(RedisIdempotencyStore.class)
	static class RedisMemoryPolicyCheck {

		// Never lazy, and runs before any listener or web server starts.
		@Bean
		SmartInitializingSingleton redisMemoryPolicyCheck(RedisIdempotencyStore store,
				IdempotentProperties properties) {
			return () -> RedisMemoryPolicy.check(store.getConnectionFactory(),
					properties.store().redis().allowEvictingPolicy());
		}

		@Configuration(proxyBeanMethods = false)
		@ConditionalOnClass({ HealthIndicator.class, ConditionalOnEnabledHealthIndicator.class })
		@ConditionalOnEnabledHealthIndicator("idempotentRedisMemory")
		static class HealthConfiguration {

			@Bean
			@ConditionalOnMissingBean(name = "idempotentRedisMemoryHealthIndicator")
			RedisMemoryHealthIndicator idempotentRedisMemoryHealthIndicator(RedisIdempotencyStore store,
					IdempotentProperties properties) {
				IdempotentRedisProperties redis = properties.store().redis();
				return new RedisMemoryHealthIndicator(store.getConnectionFactory(), redis.allowEvictingPolicy(),
						redis.claimMemoryLimit());
			}

		}

	}

	/** The JDBC store, when {@code idempotent.store.type=jdbc}: never chosen by auto. */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass({ JdbcTemplate.class, DataSourceScriptDatabaseInitializer.class })
	@ConditionalOnSingleCandidate(DataSource.class)
	@ConditionalOnStoreType(StoreType.JDBC)
	@EnableConfigurationProperties(IdempotentJdbcProperties.class)
	@Import(DatabaseInitializationDependencyConfigurer.class)
	static class Jdbc {

		/**
		 * Once the database's initializers have run; a missing table fails the start-up.
		 */
		@Bean
		@ConditionalOnMissingBean(IdempotencyStore.class)
		@DependsOnDatabaseInitialization
		JdbcIdempotencyStore jdbcIdempotencyStore(DataSource dataSource, IdempotentJdbcProperties jdbc,
				ObjectProvider<JdbcOperations> jdbcOperations,
				ObjectProvider<PlatformTransactionManager> transactionManager) {
			JdbcOperations operations = jdbcOperations.getIfUnique();
			if (!(operations instanceof JdbcTemplate template && template.getDataSource() == dataSource)) {
				operations = new JdbcTemplate(dataSource);
			}
			// Not a JPA one: its new transactions would open an entity manager per claim.
			PlatformTransactionManager transactions = transactionManager.getIfUnique();
			if (!(transactions instanceof ResourceTransactionManager resources
					&& resources.getResourceFactory() == dataSource)) {
				transactions = new DataSourceTransactionManager(dataSource);
			}
			JdbcIdempotencyStore store = new JdbcIdempotencyStore(dataSource, operations, transactions,
					jdbc.getTableName(), JdbcIdempotencyStore.detectDialect(dataSource));
			store.setJoinTransaction(jdbc.isJoinTransaction());
			// Whichever of them begins the transactions on the DataSource (a JPA one,
			// say): a completion inside another's transaction is then tied to it.
			transactionManager.orderedStream()
				.filter(ConfigurableTransactionManager.class::isInstance)
				.forEach((manager) -> store.listenTo((ConfigurableTransactionManager) manager));
			if (jdbc.getClaimReadsFirst() != null) {
				store.setClaimReadsFirst(jdbc.getClaimReadsFirst());
			}
			store.checkTable();
			return store;
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

	/**
	 * The in-memory store, when no other store applies; a store type that could not be
	 * set up fails with what is missing.
	 */
	@Configuration(proxyBeanMethods = false)
	static class Memory {

		@Bean
		@ConditionalOnMissingBean(IdempotencyStore.class)
		InMemoryIdempotencyStore inMemoryIdempotencyStore(IdempotentProperties properties,
				ListableBeanFactory beanFactory) {
			switch (properties.store().type()) {
				// An application with a database is told to keep its records there.
				case AUTO -> logger.warn("No RedisConnectionFactory found: @Idempotent keeps its records in memory, "
						+ "so duplicates that reach another instance or arrive after a restart run again. "
						+ ((beanFactory.getBeanNamesForType(DataSource.class, false, false).length > 0)
								? "This application has a DataSource: set idempotent.store.type=jdbc to keep them in "
										+ "its database (docs/stores.md, 'JDBC without Redis'), or "
										+ "idempotent.store.type=memory to silence this"
								: "Add spring-boot-starter-data-redis (or set idempotent.store.type=memory to silence "
										+ "this)"));
				case MEMORY -> {
				}
				case REDIS -> throw new IllegalStateException("idempotent.store.type=redis but there is no "
						+ "RedisConnectionFactory: add spring-boot-starter-data-redis and configure spring.data.redis.*");
				case JDBC -> throw new IllegalStateException("idempotent.store.type=jdbc but there is no single "
						+ "DataSource: add spring-boot-starter-jdbc and configure spring.datasource.*");
			}
			IdempotentMemoryProperties memory = properties.store().memory();
			long maximumSize = memory.maximumSize().toBytes();
			DataSize perScope = memory.maximumSizePerScope();
			return new InMemoryIdempotencyStore(memory.maximumRecords(), maximumSize,
					(perScope != null) ? perScope.toBytes() : maximumSize,
					InMemoryIdempotencyStore.DEFAULT_TAKEOVER_MEMORY);
		}

	}

	/**
	 * A Caffeine cache of completed results in front of the store, when {@link Wanted};
	 * on Redis kept right by {@link RedisIdempotencyStore#recordTracking}. The caching
	 * store is a primary bean; the store behind it stays a bean of its concrete type.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(Caffeine.class)
	@Conditional(LocalCache.Wanted.class)
	static class LocalCache {

		@Bean
		@Primary
		@ConditionalOnMissingBean(CachingIdempotencyStore.class)
		@ConditionalOnSingleCandidate(IdempotencyStore.class)
		CachingIdempotencyStore cachingIdempotencyStore(IdempotencyStore store, IdempotentProperties properties,
				ObjectProvider<RecordTracking> recordTracking, Environment environment) {
			IdempotentLocalCacheProperties cache = properties.localCache();
			DataSize maximumSize = cache.maximumSize();
			if (maximumSize.compareTo(properties.maxResultSize()) < 0) {
				logger.warn("idempotent.local-cache.maximum-size is " + maximumSize.toBytes() + " bytes, less than "
						+ "idempotent.max-result-size (" + properties.maxResultSize().toBytes() + " bytes): larger "
						+ "results are never cached. It is a size, not a number of results: give it a unit, e.g. 16MB");
			}
			RecordTracking tracking = recordTracking.getIfUnique();
			if (tracking != null && (tracking.isSupported() || cache.enabled() == null)) {
				// A setup that cannot track (Redis Cluster): a cache that never serves.
				return new CachingIdempotencyStore(store, maximumSize, cache.ttl(), tracking);
			}
			if (tracking != null) {
				logger.warn("idempotent.local-cache.enabled=true without invalidation tracking (" + tracking
						+ "): a result deleted from the store is still replayed from the local cache for up to "
						+ "idempotent.local-cache.ttl (" + cache.ttl() + ")");
			}
			// A result completed in the caller's transaction may still roll back: never
			// written through. (IdempotentJdbcProperties needs Boot's JDBC support.)
			boolean writeThrough = !environment.getProperty("idempotent.store.jdbc.join-transaction", Boolean.class,
					false);
			return new CachingIdempotencyStore(store, maximumSize, cache.ttl(), writeThrough);
		}

		@Configuration(proxyBeanMethods = false)
		@ConditionalOnClass(
				name = { "org.springframework.data.redis.connection.RedisConnectionFactory", Wanted.LETTUCE })
		@ConditionalOnSingleCandidate(RedisIdempotencyStore.class)
		static class RedisTrackingConfiguration {

			// The store's own factory: the application's primary may be another Redis.
			@Bean
			@ConditionalOnMissingBean(RecordTracking.class)
			RecordTracking redisRecordTracking(RedisIdempotencyStore store, IdempotentProperties properties) {
				return store.recordTracking(properties.localCache().maxStaleness());
			}

		}

		/** Explicitly enabled, or unset with the Redis store and Lettuce present. */
		static final class Wanted extends AnyNestedCondition {

			static final String LETTUCE = "io.lettuce.core.RedisClient";

			Wanted() {
				super(ConfigurationPhase.REGISTER_BEAN);
			}

			@ConditionalOnBooleanProperty(name = "idempotent.local-cache.enabled")
			static final class Enabled {

			}

			@ConditionalOnBooleanProperty(name = "idempotent.local-cache.enabled", matchIfMissing = true)
			@ConditionalOnClass(name = { "org.springframework.data.redis.connection.RedisConnectionFactory", LETTUCE })
			@ConditionalOnBean(type = "io.github.idempotent.store.redis.RedisIdempotencyStore")
			static final class RedisByDefault {

			}

		}

	}

}
