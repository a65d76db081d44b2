package io.github.idempotent.autoconfigure;

import java.lang.reflect.Field;
import java.util.List;

import org.apache.kafka.clients.producer.ProducerConfig;
import org.junit.jupiter.api.Test;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageBuilder;
import org.springframework.amqp.core.MessagePostProcessor;
import org.springframework.amqp.rabbit.config.SimpleRabbitListenerContainerFactory;
import org.springframework.amqp.rabbit.config.SimpleRabbitListenerEndpoint;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer;
import org.springframework.amqp.rabbit.listener.ConditionalRejectingErrorHandler;
import org.springframework.boot.amqp.autoconfigure.RabbitAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.kafka.config.ConcurrentKafkaListenerContainerFactory;
import org.springframework.kafka.core.DefaultKafkaProducerFactory;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.listener.CommonErrorHandler;
import org.springframework.kafka.listener.CommonLoggingErrorHandler;
import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.util.ErrorHandler;
import org.springframework.util.ReflectionUtils;

import io.github.idempotent.core.IdempotencyKeyReusedException;
import io.github.idempotent.messaging.amqp.IdempotentRabbitListenerAdvice;
import io.github.idempotent.messaging.amqp.MessageIdPostProcessor;
import io.github.idempotent.messaging.amqp.QuietRequeueErrorHandler;
import io.github.idempotent.messaging.amqp.RabbitMessageKeyResolver;
import io.github.idempotent.messaging.kafka.IdempotencyKeyProducerInterceptor;
import io.github.idempotent.messaging.kafka.IdempotencyRecordInterceptor;
import io.github.idempotent.messaging.kafka.KafkaRecordKeyResolver;

import static org.assertj.core.api.Assertions.assertThat;

class IdempotentMessagingAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class, RabbitAutoConfiguration.class,
				KafkaAutoConfiguration.class, IdempotentAutoConfiguration.class,
				IdempotentRabbitAutoConfiguration.class, IdempotentKafkaAutoConfiguration.class))
		.withPropertyValues("idempotent.store.type=memory");

	@Test
	void rabbitListenerFactoriesGetTheAdviceFirstInTheirChain() {
		this.runner.withPropertyValues("spring.rabbitmq.listener.simple.retry.enabled=true").run((context) -> {
			assertThat(context).hasSingleBean(RabbitMessageKeyResolver.class);
			SimpleRabbitListenerContainerFactory factory = context.getBean(SimpleRabbitListenerContainerFactory.class);
			assertThat(factory.getAdviceChain()).hasSize(2);
			assertThat(factory.getAdviceChain()[0]).isInstanceOf(IdempotentRabbitListenerAdvice.class);
		});
	}

	@Test
	void rabbitListenerContainersKeepTheirErrorHandlerBehindOneThatDoesNotLogTheRequeues() {
		this.runner.run((context) -> {
			SimpleRabbitListenerContainerFactory factory = context.getBean(SimpleRabbitListenerContainerFactory.class);
			assertThat(errorHandler(factory)).isInstanceOfSatisfying(QuietRequeueErrorHandler.class,
					(quiet) -> assertThat(quiet.getDelegate()).isInstanceOf(ConditionalRejectingErrorHandler.class));
		});
		this.runner.withUserConfiguration(OwnRabbitErrorHandler.class).run((context) -> {
			SimpleRabbitListenerContainerFactory factory = context.getBean("ownFactory",
					SimpleRabbitListenerContainerFactory.class);
			assertThat(errorHandler(factory)).isInstanceOfSatisfying(QuietRequeueErrorHandler.class,
					(quiet) -> assertThat(quiet.getDelegate()).isSameAs(OwnRabbitErrorHandler.HANDLER));
		});
	}

	private static Object errorHandler(SimpleRabbitListenerContainerFactory factory) {
		SimpleRabbitListenerEndpoint endpoint = new SimpleRabbitListenerEndpoint();
		endpoint.setQueueNames("orders");
		endpoint.setMessageListener((message) -> {
		});
		return ((AbstractMessageListenerContainer) factory.createListenerContainer(endpoint)).getErrorHandler();
	}

	@Test
	void rabbitTemplateStampsAMessageIdOnlyWhenThereIsNone() {
		this.runner.run((context) -> {
			RabbitTemplate template = context.getBean(RabbitTemplate.class);
			assertThat(beforePublishPostProcessors(template)).hasAtLeastOneElementOfType(MessageIdPostProcessor.class);
		});
		MessageIdPostProcessor stamp = new MessageIdPostProcessor();
		Message none = stamp.postProcessMessage(MessageBuilder.withBody(new byte[0]).build());
		assertThat(none.getMessageProperties().getMessageId()).isNotBlank();
		String first = none.getMessageProperties().getMessageId();
		assertThat(stamp.postProcessMessage(none).getMessageProperties().getMessageId()).isEqualTo(first);
	}

	@Test
	void noStampingWhenDisabled() {
		this.runner.withPropertyValues("idempotent.messaging.stamp-outgoing=false").run((context) -> {
			assertThat(beforePublishPostProcessors(context.getBean(RabbitTemplate.class)))
				.noneMatch(MessageIdPostProcessor.class::isInstance);
			DefaultKafkaProducerFactory<?, ?> producers = context.getBean(DefaultKafkaProducerFactory.class);
			assertThat(producers.getConfigurationProperties())
				.doesNotContainKey(ProducerConfig.INTERCEPTOR_CLASSES_CONFIG);
		});
	}

	@Test
	void rabbitPiecesBackOffWithoutSpringAmqp() {
		this.runner.withClassLoader(new FilteredClassLoader("org.springframework.amqp")).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context).doesNotHaveBean(RabbitMessageKeyResolver.class);
			assertThat(context).hasSingleBean(KafkaRecordKeyResolver.class);
		});
	}

	@Test
	@SuppressWarnings("unchecked")
	void kafkaFactoriesGetTheRecordInterceptorAndTheErrorHandlerTheClassification() {
		this.runner.run((context) -> {
			assertThat(context).hasSingleBean(KafkaRecordKeyResolver.class);
			ConcurrentKafkaListenerContainerFactory<?, ?> factory = context
				.getBean(ConcurrentKafkaListenerContainerFactory.class);
			assertThat(factory.getRecordInterceptor()).isInstanceOf(IdempotencyRecordInterceptor.class);
			DefaultErrorHandler handler = context.getBean(DefaultErrorHandler.class);
			assertThat(handler.removeClassification(IdempotencyKeyReusedException.class)).isFalse();
			DefaultKafkaProducerFactory<?, ?> producers = context.getBean(DefaultKafkaProducerFactory.class);
			assertThat((List<Object>) producers.getConfigurationProperties()
				.get(ProducerConfig.INTERCEPTOR_CLASSES_CONFIG))
				.containsExactly(IdempotencyKeyProducerInterceptor.class);
		});
	}

	@Test
	@SuppressWarnings("unchecked")
	void producersKeepTheirOwnInterceptorsAndGetTheKeyInterceptorOnce() {
		String key = IdempotencyKeyProducerInterceptor.class.getName();
		this.runner.withPropertyValues("spring.kafka.producer.properties[interceptor.classes]=com.example.Audit")
			.run((context) -> assertThat((List<Object>) context.getBean(DefaultKafkaProducerFactory.class)
				.getConfigurationProperties()
				.get(ProducerConfig.INTERCEPTOR_CLASSES_CONFIG))
				.containsExactly("com.example.Audit", IdempotencyKeyProducerInterceptor.class));
		this.runner.withPropertyValues("spring.kafka.producer.properties[interceptor.classes]=" + key + ", a.B")
			.run((context) -> assertThat((List<Object>) context.getBean(DefaultKafkaProducerFactory.class)
				.getConfigurationProperties()
				.get(ProducerConfig.INTERCEPTOR_CLASSES_CONFIG)).containsExactly(key, "a.B"));
	}

	@Test
	void applicationsOwnErrorHandlerIsKept() {
		this.runner.withUserConfiguration(OwnErrorHandler.class).run((context) -> {
			assertThat(context).hasSingleBean(CommonErrorHandler.class);
			assertThat(context.getBean(CommonErrorHandler.class)).isInstanceOf(CommonLoggingErrorHandler.class);
		});
	}

	@Test
	void kafkaPiecesBackOffWithoutSpringKafka() {
		this.runner.withClassLoader(new FilteredClassLoader(KafkaTemplate.class)).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context).doesNotHaveBean(KafkaRecordKeyResolver.class);
			assertThat(context).doesNotHaveBean(DefaultErrorHandler.class);
			assertThat(context).hasSingleBean(RabbitMessageKeyResolver.class);
		});
	}

	@SuppressWarnings("unchecked")
	private static List<MessagePostProcessor> beforePublishPostProcessors(RabbitTemplate template) {
		Field field = ReflectionUtils.findField(RabbitTemplate.class, "beforePublishPostProcessors");
		ReflectionUtils.makeAccessible(field);
		Object value = ReflectionUtils.getField(field, template);
		return (value != null) ? List.copyOf((java.util.Collection<MessagePostProcessor>) value) : List.of();
	}

	@Configuration(proxyBeanMethods = false)
	static class OwnRabbitErrorHandler {

		static final ErrorHandler HANDLER = (failure) -> {
		};

		@Bean
		SimpleRabbitListenerContainerFactory ownFactory() {
			SimpleRabbitListenerContainerFactory factory = new SimpleRabbitListenerContainerFactory();
			factory.setErrorHandler(HANDLER);
			return factory;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class OwnErrorHandler {

		@Bean
		CommonLoggingErrorHandler ownErrorHandler() {
			return new CommonLoggingErrorHandler();
		}

	}

}
