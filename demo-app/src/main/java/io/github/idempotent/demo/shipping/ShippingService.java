package io.github.idempotent.demo.shipping;

import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

import io.github.idempotent.annotation.Idempotent;

/**
 * The shipping consumer: one shipment per payment, however often the payment's event is
 * delivered. Whichever transport delivers it (Spring application events by default,
 * RabbitMQ with the {@code rabbit} profile) calls {@link #ship}, whose
 * {@code @Idempotent} keyed by the payment id runs it once and hands every later delivery
 * the stored shipment.
 */
@Service
public class ShippingService {

	private final Shipments shipments;

	private final AtomicLong deliveries = new AtomicLong();

	ShippingService(Shipments shipments) {
		this.shipments = shipments;
	}

	/**
	 * Counts a delivery of the event, whether or not it ships: the page shows deliveries
	 * next to shipments.
	 */
	void delivered() {
		this.deliveries.incrementAndGet();
	}

	long deliveries() {
		return this.deliveries.get();
	}

	/**
	 * Ships once per payment. A duplicate delivery that arrives while the first one still
	 * ships waits for its shipment ({@code demo.shipping.wait-for}) and gets it back: the
	 * in-process listener that calls this has nobody to retry it, and the starter cannot
	 * tell from here who the caller is (an {@code @Idempotent} method that is itself the
	 * {@code @Async} listener would wait by default). Its scope is named: an event
	 * carries no caller, and with Spring Security present a call on the {@code @Async}
	 * thread without one would fail rather than share the global scope.
	 */
	@Idempotent(name = "shipping", key = "#event.paymentId", scope = "'shipping'",
			waitFor = "${demo.shipping.wait-for}")
	@Transactional
	public Shipment ship(PaymentCaptured event) {
		return this.shipments.create(event);
	}

	@Transactional(readOnly = true)
	public List<Shipment> ofAccount(long accountId) {
		return this.shipments.ofAccount(accountId);
	}

}
