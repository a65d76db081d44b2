package io.github.idempotent.demo.shipping;

import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Profile;
import org.springframework.scheduling.annotation.Async;
import org.springframework.scheduling.annotation.EnableAsync;
import org.springframework.stereotype.Component;
import org.springframework.transaction.event.TransactionalEventListener;

/**
 * The shipping step without a broker (the default): the event travels as a Spring
 * application event, delivered after the publishing transaction commits (or at once
 * outside one) on a thread of Boot's task executor, as a broker's consumer would get it:
 * the payment's HTTP response does not wait for shipping, and a replayed delivery never
 * runs inside the payment's request (where the starter would mark the payment's response
 * as replayed).
 */
@Component
@Profile("!rabbit")
@EnableAsync
class ApplicationEventShipping implements PaymentEvents {

	private final ApplicationEventPublisher publisher;

	private final ShippingService shipping;

	ApplicationEventShipping(ApplicationEventPublisher publisher, ShippingService shipping) {
		this.publisher = publisher;
		this.shipping = shipping;
	}

	@Override
	public void publish(PaymentCaptured event, int deliveries) {
		for (int i = 0; i < deliveries; i++) {
			this.publisher.publishEvent(event);
		}
	}

	@Async
	@TransactionalEventListener(fallbackExecution = true)
	public void onPaymentCaptured(PaymentCaptured event) {
		this.shipping.delivered();
		this.shipping.ship(event);
	}

}
