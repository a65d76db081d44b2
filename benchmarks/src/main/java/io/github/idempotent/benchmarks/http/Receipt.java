package io.github.idempotent.benchmarks.http;

import java.time.Instant;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The response: a few fields derived from the request, about 250 bytes of JSON.
 */
public record Receipt(String paymentId, String orderNo, String customerId, long amountCents, String currency,
		long feeCents, String status, Instant createdAt) {

	public static Receipt of(PaymentRequest request) {
		String id = "pay_" + Long.toHexString(ThreadLocalRandom.current().nextLong());
		long fee = Math.max(30, request.amountCents() * 29 / 1000);
		return new Receipt(id, request.orderNo(), request.customerId(), request.amountCents(), request.currency(), fee,
				"CAPTURED", Instant.now());
	}

}
