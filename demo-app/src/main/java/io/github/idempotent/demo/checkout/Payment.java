package io.github.idempotent.demo.checkout;

import java.time.Instant;

/**
 * The debit of an order's amount: one ledger entry of kind {@code PAYMENT}.
 */
public record Payment(String paymentId, String orderNo, long accountId, long amount, long balanceAfter,
		Instant createdAt) {
}
