package io.github.idempotent.test.mvc;

import java.math.BigDecimal;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

import io.github.idempotent.annotation.Idempotent;

@RestController
class PaymentController {

	// Read through methods: the test holds the starter's proxy, whose fields are unset.
	private final AtomicInteger debits = new AtomicInteger();

	private final CountDownLatch slowPaymentStarted = new CountDownLatch(1);

	private final CountDownLatch slowPaymentMayFinish = new CountDownLatch(1);

	int debits() {
		return this.debits.get();
	}

	boolean awaitSlowPaymentStarted() throws InterruptedException {
		return this.slowPaymentStarted.await(30, TimeUnit.SECONDS);
	}

	void finishSlowPayment() {
		this.slowPaymentMayFinish.countDown();
	}

	@PostMapping("/api/payments")
	@Idempotent
	ResponseEntity<Payment> pay(@RequestBody PaymentRequest request) {
		this.debits.incrementAndGet();
		Payment payment = new Payment(UUID.randomUUID().toString(), request.orderNo(), request.amount());
		return ResponseEntity.status(201).header("Location", "/api/payments/" + payment.id()).body(payment);
	}

	@PostMapping("/api/slow-payments")
	@Idempotent
	ResponseEntity<Payment> paySlowly(@RequestBody PaymentRequest request) throws InterruptedException {
		this.slowPaymentStarted.countDown();
		this.slowPaymentMayFinish.await(30, TimeUnit.SECONDS);
		return pay(request);
	}

	@PostMapping("/api/unguarded-payments")
	ResponseEntity<Payment> payUnguarded(@RequestBody PaymentRequest request) {
		return pay(request);
	}

	record PaymentRequest(String orderNo, BigDecimal amount) {
	}

	record Payment(String id, String orderNo, BigDecimal amount) {
	}

}
