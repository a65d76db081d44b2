package io.github.idempotent.demo.checkout;

import java.time.Instant;

/**
 * A movement of money: negative for a payment, positive for a refund or deposit.
 */
public record LedgerEntry(String id, long accountId, String orderNo, String kind, long amount, long balanceAfter,
		Instant createdAt) {
}
