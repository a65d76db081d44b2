package io.github.idempotent.autoconfigure;

import io.micrometer.observation.ObservationRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

import io.github.idempotent.core.IdempotentCallObservations;
import io.github.idempotent.core.IdempotencyExecutor;
import io.github.idempotent.observation.IdempotencyObservationConvention;
import io.github.idempotent.observation.IdempotencyObservations;

/**
 * Auto-configuration of a Micrometer observation per {@code @Idempotent} call, when
 * {@code micrometer-observation} is on the class path and the application has an
 * {@link ObservationRegistry} (Boot's, with Actuator). An
 * {@link IdempotencyObservationConvention} bean replaces the default names and key
 * values.
 */
@AutoConfiguration(after = IdempotentAutoConfiguration.class,
		afterName = "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration")
@ConditionalOnClass(ObservationRegistry.class)
@ConditionalOnBean({ ObservationRegistry.class, IdempotencyExecutor.class })
@EnableConfigurationProperties(IdempotentObservationProperties.class)
public final class IdempotentObservationAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(IdempotentCallObservations.class)
	IdempotencyObservations idempotencyObservations(ObservationRegistry registry, IdempotencyExecutor executor,
			ObjectProvider<IdempotencyObservationConvention> convention, IdempotentObservationProperties properties) {
		return new IdempotencyObservations(registry, executor.getStore(), convention.getIfUnique(),
				properties.isIncludeKey());
	}

}
