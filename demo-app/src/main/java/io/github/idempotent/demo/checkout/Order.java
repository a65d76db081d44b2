package io.github.idempotent.demo.checkout;

import java.time.Instant;

/**
 * An order, identified to clients by the {@code orderNo} they chose.
 */
public record Order(String orderNo, long accountId, long amount, OrderStatus status, Instant createdAt) {
}
