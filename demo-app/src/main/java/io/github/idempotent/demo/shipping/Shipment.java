package io.github.idempotent.demo.shipping;

import java.time.Instant;

/**
 * The parcel sent for one payment.
 */
public record Shipment(String shipmentId, String paymentId, String orderNo, long accountId, Instant createdAt) {
}
