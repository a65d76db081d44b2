package io.github.idempotent.demo.checkout;

import java.net.URI;
import java.time.Duration;
import java.util.List;

import io.swagger.v3.oas.annotations.responses.ApiResponse;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.demo.shipping.PaymentCaptured;
import io.github.idempotent.demo.shipping.PaymentEvents;

/**
 * The checkout's HTTP API. Payments and refunds take an {@code Idempotency-Key} header:
 * {@code @Idempotent} with no key expression reads it, runs the method once per key and
 * replays the stored {@code ResponseEntity} (status, headers, body) to every retry, with
 * {@code Idempotent-Replayed: true}.
 */
@RestController
@RequestMapping("/api")
class CheckoutController {

	private final CheckoutService checkout;

	private final Duration gatewayDelay;

	private final PaymentEvents paymentEvents;

	CheckoutController(CheckoutService checkout, @Value("${demo.payments.gateway-delay:0s}") Duration gatewayDelay,
			PaymentEvents paymentEvents) {
		this.checkout = checkout;
		this.gatewayDelay = gatewayDelay;
		this.paymentEvents = paymentEvents;
	}

	@GetMapping("/accounts/{id}")
	Account account(@PathVariable long id) {
		return this.checkout.account(id);
	}

	@PostMapping("/accounts")
	ResponseEntity<Account> openAccount(@RequestBody OpenAccount request) {
		Account account = this.checkout.openAccount(request.holder(), request.balance());
		return ResponseEntity.created(URI.create("/api/accounts/" + account.id())).body(account);
	}

	@GetMapping("/accounts/{id}/ledger")
	List<LedgerEntry> ledger(@PathVariable long id) {
		return this.checkout.ledger(id);
	}

	/**
	 * Not {@code @Idempotent}: the client's {@code orderNo} is the key, enforced by the
	 * UNIQUE constraint.
	 */
	@PostMapping("/orders")
	ResponseEntity<Order> createOrder(@RequestBody CreateOrder request) {
		CheckoutService.Created<Order> order = this.checkout.createOrder(request.orderNo(), request.accountId(),
				request.amount());
		return ResponseEntity.status(order.created() ? HttpStatus.CREATED : HttpStatus.OK)
			.location(URI.create("/api/orders/" + order.value().orderNo()))
			.body(order.value());
	}

	@GetMapping("/orders/{orderNo}")
	Order order(@PathVariable String orderNo) {
		return this.checkout.order(orderNo);
	}

	/**
	 * Duplicates that arrive while the first call runs wait up to
	 * {@code demo.payments.wait-for} (5 s) for its result instead of getting 409 at once.
	 * {@code demo.payments.gateway-delay} plays a slow card network that confirms the
	 * charge after the account is debited, to watch a duplicate arrive while the first
	 * call is still running, or an instance die after the debit and before its answer
	 * (see {@link CheckoutService#pay}).
	 * <p>
	 * Publishes {@code PaymentCaptured} for the shipping step every time it runs (not
	 * only when it debits): a consumer must cope with the same event twice anyway.
	 * {@code deliverEventTwice} plays a broker that redelivers it. Like every query
	 * parameter, it is part of the request's fingerprint: a retry sends it again as it
	 * was.
	 */
	@PostMapping("/payments")
	@Idempotent(name = "payments", waitFor = "${demo.payments.wait-for:5s}")
	@ApiResponse(responseCode = "201", description = "Paid: the account was debited")
	@ApiResponse(responseCode = "200",
			description = "The order was already paid (by another key): the existing payment, nothing debited")
	ResponseEntity<Payment> pay(@RequestBody PayOrder request,
			@RequestParam(defaultValue = "false") boolean deliverEventTwice) throws InterruptedException {
		if (request.orderNo() == null || request.orderNo().isBlank()) {
			throw CheckoutException.invalid("orderNo is required");
		}
		CheckoutService.Created<Payment> payment = this.checkout.pay(request.orderNo());
		Thread.sleep(this.gatewayDelay.toMillis());
		Payment paid = payment.value();
		this.paymentEvents.publish(
				new PaymentCaptured(paid.paymentId(), paid.orderNo(), paid.accountId(), paid.amount()),
				deliverEventTwice ? 2 : 1);
		return ResponseEntity.status(payment.created() ? HttpStatus.CREATED : HttpStatus.OK)
			.location(URI.create("/api/payments/" + payment.value().paymentId()))
			.body(payment.value());
	}

	@GetMapping("/payments/{paymentId}")
	Payment payment(@PathVariable String paymentId) {
		return this.checkout.payment(paymentId);
	}

	@PostMapping("/orders/{orderNo}/refund")
	@Idempotent(name = "refunds", waitFor = "5s")
	ResponseEntity<Order> refund(@PathVariable String orderNo) {
		return ResponseEntity.ok(this.checkout.refund(orderNo));
	}

	@PostMapping("/orders/{orderNo}/ship")
	Order ship(@PathVariable String orderNo) {
		return this.checkout.ship(orderNo);
	}

	@PostMapping("/orders/{orderNo}/complete")
	Order complete(@PathVariable String orderNo) {
		return this.checkout.complete(orderNo);
	}

	@PostMapping("/orders/{orderNo}/cancel")
	Order cancel(@PathVariable String orderNo) {
		return this.checkout.cancel(orderNo);
	}

	record OpenAccount(String holder, long balance) {
	}

	record CreateOrder(String orderNo, long accountId, long amount) {
	}

	record PayOrder(String orderNo) {
	}

}
