package io.github.idempotent.benchmarks.http;

/**
 * Body of a payment request.
 */
public record PaymentRequest(String orderNo, String customerId, long amountCents, String currency) {
}
