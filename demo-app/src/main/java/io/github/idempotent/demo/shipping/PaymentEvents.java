package io.github.idempotent.demo.shipping;

/**
 * Where the checkout publishes {@link PaymentCaptured}.
 */
public interface PaymentEvents {

	/**
	 * Publishes the event {@code deliveries} times: more than once plays a broker that
	 * redelivers, or a publisher that retried.
	 */
	void publish(PaymentCaptured event, int deliveries);

}
