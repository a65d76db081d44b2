package io.github.idempotent.autoconfigure;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.condition.ConditionEvaluationReport;
import org.springframework.boot.autoconfigure.condition.ConditionEvaluationReport.ConditionAndOutcomes;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.env.PropertiesPropertySourceLoader;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.io.ByteArrayResource;

import io.github.idempotent.store.jdbc.JdbcIdempotencyStore;
import io.github.idempotent.store.memory.InMemoryIdempotencyStore;
import io.github.idempotent.store.redis.RedisIdempotencyStore;
import io.github.idempotent.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code idempotent.store.type} as an application.properties file gives it: Spring Boot
 * keeps a value's trailing blanks, and the type binds without them, so every store
 * configuration must read the value the same way. One that reads it otherwise picks
 * another store than the one the properties bind to.
 */
class StoreTypeValueTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, IdempotentAutoConfiguration.class))
		.withPropertyValues("spring.data.redis.host=" + TestRedis.host(), "spring.data.redis.port=" + TestRedis.port());

	@Test
	void memoryWithATrailingBlankKeepsRecordsInMemoryWhenRedisIsThere() {
		this.runner.withInitializer((context) -> applicationProperties(context, "idempotent.store.type=memory \n"))
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(IdempotentProperties.class).store().type())
					.isEqualTo(IdempotentProperties.StoreType.MEMORY);
				assertThat(context).hasSingleBean(InMemoryIdempotencyStore.class)
					.doesNotHaveBean(RedisIdempotencyStore.class);
			});
	}

	@Test
	void jdbcWithATrailingBlankKeepsRecordsInTheDatabaseWhenRedisIsThere() {
		this.runner.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class))
			.withPropertyValues("spring.datasource.generate-unique-name=true")
			.withInitializer((context) -> applicationProperties(context, "idempotent.store.type=jdbc \n"))
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(IdempotentProperties.class).store().type())
					.isEqualTo(IdempotentProperties.StoreType.JDBC);
				assertThat(context).hasSingleBean(JdbcIdempotencyStore.class)
					.doesNotHaveBean(RedisIdempotencyStore.class);
				// The condition report says why Redis stood aside.
				ConditionAndOutcomes redis = ConditionEvaluationReport.get(context.getBeanFactory())
					.getConditionAndOutcomesBySource()
					.get(StoreConfigurations.Redis.class.getName());
				assertThat(redis.isFullMatch()).isFalse();
				assertThat(redis).anySatisfy((outcome) -> assertThat(outcome.getOutcome().getMessage()).isEqualTo(
						"@StoreConfigurations.ConditionalOnStoreType [AUTO, REDIS] idempotent.store.type is JDBC"));
			});
	}

	private static void applicationProperties(ConfigurableApplicationContext context, String text) {
		try {
			new PropertiesPropertySourceLoader()
				.load("application.properties", new ByteArrayResource(text.getBytes(StandardCharsets.ISO_8859_1)))
				.forEach(context.getEnvironment().getPropertySources()::addFirst);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
