package io.github.idempotent.docs;

import java.math.BigDecimal;
import java.time.LocalDate;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import reactor.core.publisher.Mono;

/**
 * The reader's own types that the Java snippets of the docs use ({@code Payment},
 * {@code PaymentCaptured}, ...), imported on demand by every snippet, so that a type the
 * snippet declares or imports by name wins. The starter's types are not here: a snippet
 * imports them, as the reader has to.
 */
public final class ReaderTypes {

	private ReaderTypes() {
	}

	public record PaymentRequest(String orderNo, BigDecimal amount) {
	}

	public record Payment(String id, String orderNo, BigDecimal amount, String currency) {
	}

	public record Receipt(String paymentId) {
	}

	public record ConfirmRequest(String orderNo) {
	}

	public record Charge(String id) {
	}

	public record ChargeRequest(String orderNo) {
	}

	public record PaymentCaptured(String paymentId, String orderNo) {
	}

	public record Shipment(String id) {
	}

	public record ShipOrder(String orderNo) {
	}

	public record Order(String orderNo) {
	}

	public record Invoice(String id) {
	}

	public record InvoiceRequest(String amount) {
	}

	public interface Tenants {

		String current();

	}

	public interface Payments {

		Receipt charge(PaymentRequest request);

		Receipt charge(Order order);

		List<Receipt> captureAll(String batchId);

	}

	public interface ChargeProvider {

		Optional<Charge> findCharge(String orderNo);

		Charge charge(ChargeRequest request);

	}

	public interface Receipts {

		Receipt find(String orderNo);

	}

	public interface Gateway {

		CompletableFuture<Receipt> chargeAsync(PaymentRequest request);

		Mono<Receipt> charge(PaymentRequest request);

	}

	public interface Ledger {

		void close(LocalDate day);

		void append(PaymentCaptured event);

	}

	public interface Duplicates {

		void record(PaymentCaptured event);

	}

	public interface Orders {

		Order place(String orderNo);

	}

	public interface Shipping {

		void ship(ShipOrder order);

	}

}
