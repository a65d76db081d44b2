package io.github.idempotent.autoconfigure;

import java.lang.reflect.Modifier;
import java.util.Arrays;
import java.util.stream.Stream;

import org.aopalliance.aop.Advice;
import org.aopalliance.intercept.MethodInterceptor;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.amqp.ImmediateRequeueAmqpException;
import org.springframework.amqp.rabbit.config.BaseRabbitListenerContainerFactory;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer;
import org.springframework.amqp.rabbit.retry.MessageRecoverer;
import org.springframework.aop.framework.Advised;
import org.springframework.aop.framework.ProxyFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.amqp.autoconfigure.RabbitTemplateCustomizer;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

import io.github.idempotent.core.IdempotencyException;
import io.github.idempotent.messaging.amqp.IdempotentRabbitListenerAdvice;
import io.github.idempotent.messaging.amqp.MessageIdPostProcessor;
import io.github.idempotent.messaging.amqp.QuietRequeueErrorHandler;
import io.github.idempotent.messaging.amqp.RabbitMessageKeyResolver;
import io.github.idempotent.web.IdempotentWebMvcAutoConfiguration;

/**
 * {@code @Idempotent} on {@code @RabbitListener} methods: the key from the
 * {@code message-id}, the advice in every listener container factory's chain, recoverers
 * that leave in-progress duplicates alone, and a {@code message-id} on every message
 * sent. After the web auto-configuration, whose key resolver backs off for this one.
 */
@AutoConfiguration(before = IdempotentAutoConfiguration.class, after = IdempotentWebMvcAutoConfiguration.class,
		afterName = "org.springframework.boot.amqp.autoconfigure.RabbitAutoConfiguration")
@ConditionalOnClass({ RabbitTemplate.class, BaseRabbitListenerContainerFactory.class })
@ConditionalOnBooleanProperty(name = "idempotent.enabled", matchIfMissing = true)
@EnableConfigurationProperties(IdempotentProperties.class)
public final class IdempotentRabbitAutoConfiguration {

	private static final Log logger = LogFactory.getLog(IdempotentRabbitAutoConfiguration.class);

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
					// First, so that it sees what a retry recoverer makes of a failure.
					Stream<Advice> others = Stream.ofNullable(factory.getAdviceChain())
						.flatMap(Arrays::stream)
						.filter((other) -> !(other instanceof IdempotentRabbitListenerAdvice));
					factory.setAdviceChain(Stream
						.concat(Stream.of(new IdempotentRabbitListenerAdvice(
								properties.getObject().messaging().inProgressBackOff())), others)
						.toArray(Advice[]::new));
					return quietRequeues(factory);
				}
				if (bean instanceof MessageRecoverer recoverer && !(bean instanceof Advised)) {
					return requeueInProgress(recoverer);
				}
				return bean;
			}

		};
	}

	// Wraps the error handler of each container the factory creates, so that the
	// advice's requeues are not logged with a stack trace per redelivery.
	static Object quietRequeues(BaseRabbitListenerContainerFactory<?> factory) {
		if (factory instanceof Advised || Modifier.isFinal(factory.getClass().getModifiers())) {
			logger.debug("Cannot wrap the error handlers of " + factory + "'s containers, left as they are");
			return factory;
		}
		return classProxy(factory, (invocation) -> {
			Object created = invocation.proceed();
			if ("createListenerContainer".equals(invocation.getMethod().getName())
					&& created instanceof AbstractMessageListenerContainer container
					&& !(container.getErrorHandler() instanceof QuietRequeueErrorHandler)) {
				container.setErrorHandler(new QuietRequeueErrorHandler(container.getErrorHandler()));
			}
			return created;
		});
	}

	// A republishing recoverer would dead-letter a duplicate merely in progress.
	static Object requeueInProgress(MessageRecoverer recoverer) {
		return classProxy(recoverer, (invocation) -> {
			if ("recover".equals(invocation.getMethod().getName())) {
				for (Object argument : invocation.getArguments()) {
					IdempotencyException requeued = (argument instanceof Throwable failure)
							? IdempotencyException.findRetryable(failure) : null;
					if (requeued != null) {
						throw new ImmediateRequeueAmqpException(requeued.getMessage(), requeued);
					}
				}
			}
			return invocation.proceed();
		});
	}

	/** A class-based proxy keeps the bean's type. */
	private static Object classProxy(Object target, MethodInterceptor interceptor) {
		ProxyFactory proxy = new ProxyFactory(target);
		proxy.setProxyTargetClass(true);
		proxy.addAdvice(interceptor);
		return proxy.getProxy(target.getClass().getClassLoader());
	}

	@Bean
	@ConditionalOnBooleanProperty(name = "idempotent.messaging.stamp-outgoing", matchIfMissing = true)
	RabbitTemplateCustomizer idempotentMessageIdRabbitTemplateCustomizer() {
		return (template) -> template.addBeforePublishPostProcessors(new MessageIdPostProcessor());
	}

}
