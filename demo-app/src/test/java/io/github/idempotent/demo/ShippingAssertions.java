package io.github.idempotent.demo;

import java.time.Duration;

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

}
