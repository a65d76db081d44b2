package io.github.idempotent.demo.shipping;

import org.springframework.amqp.core.Queue;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.support.converter.JacksonJsonMessageConverter;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Profile;

/**
 * The shipping step on RabbitMQ (profile {@code rabbit}): the checkout publishes
 * {@link PaymentCaptured} as JSON to a queue (with a dead-letter queue for what cannot be
 * processed), and a {@code @RabbitListener} hands each delivery to the same
 * {@code @Idempotent} {@link ShippingService#ship}.
 */
@Configuration(proxyBeanMethods = false)
@Profile("rabbit")
class RabbitShipping {

	@Bean
	Queue paymentCapturedQueue(@Value("${demo.shipping.queue}") String name) {
		return QueueBuilder.durable(name).deadLetterExchange("").deadLetterRoutingKey(name + ".dlq").build();
	}

	@Bean
	Queue paymentCapturedDeadLetterQueue(@Value("${demo.shipping.queue}") String name) {
		return QueueBuilder.durable(name + ".dlq").build();
	}

	@Bean
	JacksonJsonMessageConverter jsonMessageConverter() {
		return new JacksonJsonMessageConverter();
	}

	@Bean
	PaymentEvents rabbitPaymentEvents(RabbitTemplate rabbit, @Value("${demo.shipping.queue}") String queue) {
		return (event, deliveries) -> {
			for (int i = 0; i < deliveries; i++) {
				// The payment id as message-id: a redelivered or re-published event keeps
				// it, so even a listener without a key expression would see one message.
				rabbit.convertAndSend("", queue, event, (message) -> {
					message.getMessageProperties().setMessageId(event.paymentId());
					return message;
				});
			}
		};
	}

	@Bean
	Listener paymentCapturedListener(ShippingService shipping) {
		return new Listener(shipping);
	}

	static class Listener {

		private final ShippingService shipping;

		Listener(ShippingService shipping) {
			this.shipping = shipping;
		}

		@RabbitListener(queues = "${demo.shipping.queue}")
		void onPaymentCaptured(PaymentCaptured event) {
			this.shipping.delivered();
			this.shipping.ship(event);
		}

	}

}
