package io.github.idempotent.actuate;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.util.ClassUtils;

import io.github.idempotent.core.IdempotencyExecutor;
import io.github.idempotent.store.InspectableIdempotencyStore;

/**
 * The Actuator endpoint {@code idempotency}, when available and the store inspectable.
 */
@AutoConfiguration(afterName = { "io.github.idempotent.autoconfigure.IdempotentAutoConfiguration",
		"io.github.idempotent.core.IdempotentAnnotationAutoConfiguration" })
@ConditionalOnClass({ Endpoint.class, ConditionalOnAvailableEndpoint.class })
@ConditionalOnAvailableEndpoint(IdempotencyEndpoint.class)
@ConditionalOnBooleanProperty(name = "idempotent.enabled", matchIfMissing = true)
@ConditionalOnBean({ IdempotencyExecutor.class, InspectableIdempotencyStore.class })
@EnableConfigurationProperties(IdempotencyEndpointProperties.class)
public final class IdempotentActuatorAutoConfiguration {

	private static final boolean MICROMETER_PRESENT = ClassUtils.isPresent(
			"io.micrometer.core.instrument.MeterRegistry", IdempotentActuatorAutoConfiguration.class.getClassLoader());

	@Bean
	@ConditionalOnMissingBean
	IdempotencyEndpoint idempotencyEndpoint(IdempotencyExecutor executor, IdempotencyEndpointProperties endpoint,
			ObjectProvider<InspectableIdempotencyStore> inspectableStores, BeanFactory beanFactory) {
		// The store the interceptor uses, so that a deletion also leaves the local cache.
		InspectableIdempotencyStore inspectable = (executor.getStore() instanceof InspectableIdempotencyStore candidate)
				? candidate : inspectableStores.getObject();
		Runnable deletions = MICROMETER_PRESENT ? DeletionCounter.of(beanFactory) : () -> {
		};
		return new IdempotencyEndpoint(inspectable, executor::operationNames, executor.getKeyPrefix(),
				endpoint.showValues(), endpoint.roles(), deletions);
	}

	/** Loaded only when Micrometer is present. */
	private static final class DeletionCounter {

		// A registry hands back the counter it registered before.
		static Runnable of(BeanFactory beanFactory) {
			ObjectProvider<MeterRegistry> registry = beanFactory.getBeanProvider(MeterRegistry.class);
			return () -> registry.ifAvailable((meters) -> Counter.builder("idempotent.actuator.deletions")
				.description("Idempotency records deleted through the actuator endpoint")
				.register(meters)
				.increment());
		}

	}

}
