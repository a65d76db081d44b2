package io.github.idempotent.demo.shipping;

/**
 * Published after a payment: the shipping step's input. Delivered at least once, so
 * possibly more than once.
 */
public record PaymentCaptured(String paymentId, String orderNo, long accountId, long amount) {
}
