package io.github.idempotent.autoconfigure;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.aopalliance.aop.Advice;

import org.springframework.amqp.rabbit.config.BaseRabbitListenerContainerFactory;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.amqp.autoconfigure.RabbitTemplateCustomizer;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

import io.github.idempotent.messaging.DuplicateMessageLogger;
import io.github.idempotent.messaging.amqp.IdempotentRabbitListenerAdvice;
import io.github.idempotent.messaging.amqp.MessageIdPostProcessor;
import io.github.idempotent.messaging.amqp.RabbitMessageKeyResolver;

/**
 * {@code @Idempotent} on {@code @RabbitListener} methods: the key from the message's
 * {@code message-id}, the failure classification in every listener container factory's
 * advice chain (added to the application's chain, not replacing it), and a
 * {@code message-id} on every message {@code RabbitTemplate} sends.
 * <p>
 * After the web auto-configuration, whose key resolver backs off when it finds another
 * one: a web application with listeners needs both.
 */
@AutoConfiguration(before = IdempotentAutoConfiguration.class, after = IdempotentWebMvcAutoConfiguration.class,
		afterName = "org.springframework.boot.amqp.autoconfigure.RabbitAutoConfiguration")
@ConditionalOnClass({ RabbitTemplate.class, BaseRabbitListenerContainerFactory.class })
@ConditionalOnBooleanProperty(name = "idempotent.enabled", matchIfMissing = true)
@EnableConfigurationProperties(IdempotentProperties.class)
public final class IdempotentRabbitAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	RabbitMessageKeyResolver rabbitMessageKeyResolver() {
		return new RabbitMessageKeyResolver();
	}

	@Bean
	DuplicateMessageLogger idempotentRabbitDuplicateLogger() {
		return new DuplicateMessageLogger("RabbitMQ", () -> RabbitMessageKeyResolver.currentMessage() != null);
	}

	@Bean
	static BeanPostProcessor idempotentRabbitListenerContainerFactoryPostProcessor(
			ObjectProvider<IdempotentProperties> properties) {
		return new BeanPostProcessor() {

			@Override
			public Object postProcessAfterInitialization(Object bean, String beanName) {
				if (bean instanceof BaseRabbitListenerContainerFactory<?> factory) {
					addAdvice(factory, new IdempotentRabbitListenerAdvice(
							properties.getObject().getMessaging().getInProgressBackOff()));
				}
				return bean;
			}

		};
	}

	/**
	 * First in the chain, so that it sees what a retry interceptor's recoverer makes of a
	 * failure and can still requeue an in-progress duplicate.
	 */
	static void addAdvice(BaseRabbitListenerContainerFactory<?> factory, IdempotentRabbitListenerAdvice advice) {
		Advice[] existing = factory.getAdviceChain();
		List<Advice> chain = new ArrayList<>();
		chain.add(advice);
		if (existing != null) {
			Arrays.stream(existing)
				.filter((other) -> !(other instanceof IdempotentRabbitListenerAdvice))
				.forEach(chain::add);
		}
		factory.setAdviceChain(chain.toArray(new Advice[0]));
	}

	@Bean
	@ConditionalOnBooleanProperty(name = "idempotent.messaging.stamp-outgoing", matchIfMissing = true)
	RabbitTemplateCustomizer idempotentMessageIdRabbitTemplateCustomizer() {
		return (template) -> template.addBeforePublishPostProcessors(new MessageIdPostProcessor());
	}

}
