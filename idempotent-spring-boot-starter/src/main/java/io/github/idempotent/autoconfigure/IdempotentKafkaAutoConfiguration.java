package io.github.idempotent.autoconfigure;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.producer.ProducerConfig;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.kafka.autoconfigure.DefaultKafkaProducerFactoryCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.kafka.config.AbstractKafkaListenerContainerFactory;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.listener.CommonErrorHandler;
import org.springframework.kafka.listener.CompositeRecordInterceptor;
import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.kafka.listener.RecordInterceptor;
import org.springframework.util.StringUtils;

import io.github.idempotent.messaging.kafka.IdempotencyErrorHandling;
import io.github.idempotent.messaging.kafka.IdempotencyKeyProducerInterceptor;
import io.github.idempotent.messaging.kafka.IdempotencyRecordInterceptor;
import io.github.idempotent.messaging.kafka.KafkaRecordKeyResolver;
import io.github.idempotent.web.IdempotentWebMvcAutoConfiguration;

/**
 * {@code @Idempotent} on {@code @KafkaListener} methods: the key from the record, a
 * record interceptor on every listener container factory, the classification of the
 * refusals on every {@code DefaultErrorHandler}, and a key header on every record sent.
 * After the web auto-configuration, whose key resolver backs off when it finds another.
 */
@AutoConfiguration(before = IdempotentAutoConfiguration.class, after = IdempotentWebMvcAutoConfiguration.class,
		afterName = "org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration")
@ConditionalOnClass({ KafkaTemplate.class, DefaultErrorHandler.class })
@ConditionalOnBooleanProperty(name = "idempotent.enabled", matchIfMissing = true)
@EnableConfigurationProperties(IdempotentProperties.class)
public final class IdempotentKafkaAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	KafkaRecordKeyResolver kafkaRecordKeyResolver(IdempotentProperties properties) {
		return new KafkaRecordKeyResolver(properties.messaging().keyHeader(), properties.maxKeyLength());
	}

	@Bean
	DuplicateMessageLogger idempotentKafkaDuplicateLogger() {
		return new DuplicateMessageLogger("Kafka", () -> KafkaRecordKeyResolver.currentRecord() != null);
	}

	@Bean
	static BeanPostProcessor idempotentKafkaPostProcessor(ObjectProvider<IdempotentProperties> properties) {
		return new BeanPostProcessor() {

			@Override
			@SuppressWarnings({ "unchecked", "rawtypes" })
			public Object postProcessAfterInitialization(Object bean, String beanName) {
				if (bean instanceof AbstractKafkaListenerContainerFactory factory) {
					RecordInterceptor existing = factory.getRecordInterceptor();
					if (!(existing instanceof IdempotencyRecordInterceptor)) {
						factory.setRecordInterceptor((existing != null)
								? new CompositeRecordInterceptor(new IdempotencyRecordInterceptor(), existing)
								: new IdempotencyRecordInterceptor());
					}
				}
				if (bean instanceof DefaultErrorHandler handler) {
					IdempotencyErrorHandling.configure(handler, properties.getObject().messaging().inProgressBackOff());
				}
				return bean;
			}

		};
	}

	/** Spring Kafka's own default, as a bean so that the classification applies to it. */
	@Bean
	@ConditionalOnMissingBean(CommonErrorHandler.class)
	DefaultErrorHandler idempotentKafkaErrorHandler() {
		return new DefaultErrorHandler();
	}

	@Bean
	@ConditionalOnBooleanProperty(name = "idempotent.messaging.stamp-outgoing", matchIfMissing = true)
	DefaultKafkaProducerFactoryCustomizer idempotentKeyProducerFactoryCustomizer(IdempotentProperties properties) {
		return (producerFactory) -> {
			Object configured = producerFactory.getConfigurationProperties()
				.get(ProducerConfig.INTERCEPTOR_CLASSES_CONFIG);
			List<Object> interceptors = new ArrayList<>((configured instanceof Collection<?> collection) ? collection
					: (configured instanceof String text) ? List.of(StringUtils.tokenizeToStringArray(text, ","))
							: (configured instanceof Class<?>) ? List.of(configured) : List.of());
			if (!interceptors.contains(IdempotencyKeyProducerInterceptor.class)
					&& !interceptors.contains(IdempotencyKeyProducerInterceptor.class.getName())) {
				interceptors.add(IdempotencyKeyProducerInterceptor.class);
			}
			producerFactory.updateConfigs(Map.of(ProducerConfig.INTERCEPTOR_CLASSES_CONFIG, interceptors,
					IdempotencyKeyProducerInterceptor.HEADER_NAME_CONFIG, properties.messaging().keyHeader()));
		};
	}

}
