package io.github.idempotent.demo;

import java.time.Duration;
import java.util.function.LongSupplier;

import static org.awaitility.Awaitility.await;

/**
 * Waits for the shipping consumer, which runs after the payment's response over RabbitMQ
 * (at once with application events).
 */
final class ShippingAssertions {

	private ShippingAssertions() {
	}

	static void awaitDeliveries(DemoHttp http, long atLeast) {
		await().atMost(Duration.ofSeconds(20)).until(() -> http.deliveries() >= atLeast);
	}

	/**
	 * Waits for the first shipment of a payment to commit: a listener counts a delivery
	 * before it ships, so the last counted delivery may still be shipping.
	 */
	static void awaitShipped(LongSupplier shipments) {
		await().atMost(Duration.ofSeconds(20)).until(() -> shipments.getAsLong() >= 1);
	}

}
