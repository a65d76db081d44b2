package io.github.idempotent.web;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.server.ResponseStatusException;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.state.IllegalStateTransitionException;

/**
 * A small payments API for the HTTP contract tests. Every endpoint counts its executions
 * so that tests can tell a replay from a second run.
 * <p>
 * It scans nothing: its beans are its own nested components (registered with it) and the
 * controllers it imports, so that the other test applications of this package, and their
 * controllers, stay out.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import({ ExactReplayController.class, AsyncExactReplayController.class, JsonResponsesController.class,
		LargeOrdersController.class, SuspendPayments.class, WebTestApplication.ShopA.Ledger.class,
		WebTestApplication.ShopB.Ledger.class })
public class WebTestApplication {

	@Bean
	SecurityFilterChain securityFilterChain(HttpSecurity http) throws Exception {
		return http.csrf((csrf) -> csrf.disable())
			.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll())
			.httpBasic((basic) -> {
			})
			.build();
	}

	@Bean
	InMemoryUserDetailsManager users() {
		return new InMemoryUserDetailsManager(User.withUsername("alice").password("{noop}alice").roles("USER").build(),
				User.withUsername("bob").password("{noop}bob").roles("USER").build());
	}

	@Bean
	Executions executions() {
		return new Executions();
	}

	@Bean
	Gate gate() {
		return new Gate();
	}

	@Bean
	Ledger ledger(Executions executions) {
		return new Ledger(executions);
	}

	/**
	 * A bean whose own @Idempotent method the checkout calls: one ledger entry per order,
	 * however many payment attempts (with their own keys) there are.
	 */
	public static class Ledger {

		private final Executions executions;

		Ledger(Executions executions) {
			this.executions = executions;
		}

		@Idempotent(key = "#p0")
		public String record(String orderNo) {
			return "entry-" + this.executions.increment("ledger") + "-" + orderNo;
		}

	}

	enum Status {

		CREATED, PAID, REFUNDED

	}

	public record PaymentRequest(String orderNo, long amount) {
	}

	public record Payment(String id, String orderNo, long amount, String payer) {
	}

	public static class PaymentDeclinedException extends RuntimeException {

		public PaymentDeclinedException(String message) {
			super(message);
		}

	}

	public static class Executions implements EndpointRuns {

		private final Map<String, AtomicInteger> counts = new ConcurrentHashMap<>();

		@Override
		public int increment(String endpoint) {
			return this.counts.computeIfAbsent(endpoint, (k) -> new AtomicInteger()).incrementAndGet();
		}

		public int count(String endpoint) {
			AtomicInteger count = this.counts.get(endpoint);
			return (count != null) ? count.get() : 0;
		}

		public void reset() {
			this.counts.clear();
		}

	}

	/**
	 * Holds the gated endpoint inside its method until the test opens the gate, so that a
	 * test can inject a fault while the method runs.
	 */
	public static class Gate {

		private volatile CountDownLatch entered = new CountDownLatch(1);

		private volatile CountDownLatch open = new CountDownLatch(1);

		public void reset() {
			this.entered = new CountDownLatch(1);
			this.open = new CountDownLatch(1);
		}

		public boolean awaitEntered() throws InterruptedException {
			return this.entered.await(10, TimeUnit.SECONDS);
		}

		public void open() {
			this.open.countDown();
		}

		void pass() throws InterruptedException {
			this.entered.countDown();
			this.open.await(30, TimeUnit.SECONDS);
		}

	}

	@RestController
	static class PaymentsController {

		private final Executions executions;

		private final Gate gate;

		PaymentsController(Executions executions, Gate gate) {
			this.executions = executions;
			this.gate = gate;
		}

		@PostMapping("/gated-payments")
		@Idempotent(lease = "300ms")
		Payment gatedPay(@RequestBody PaymentRequest request) throws InterruptedException {
			int n = this.executions.increment("gated");
			this.gate.pass();
			return new Payment("gated-" + n, request.orderNo(), request.amount(), "anonymous");
		}

		@PostMapping("/payments")
		@Idempotent
		ResponseEntity<Payment> pay(@RequestBody PaymentRequest request, java.security.Principal principal) {
			int n = this.executions.increment("payments");
			String payer = (principal != null) ? principal.getName() : "anonymous";
			Payment payment = new Payment("pay-" + n + "-" + request.orderNo(), request.orderNo(), request.amount(),
					payer);
			return ResponseEntity.status(HttpStatus.CREATED)
				.header("Location", "/payments/" + payment.id())
				.header("X-Payment-Id", payment.id())
				.header("Cache-Control", "no-store")
				.body(payment);
		}

		@PostMapping("/slow-payments")
		@Idempotent
		Payment slowPay(@RequestBody PaymentRequest request) throws InterruptedException {
			int n = this.executions.increment("slow");
			Thread.sleep(300);
			return new Payment("slow-" + n, request.orderNo(), request.amount(), "anonymous");
		}

		@PostMapping("/orders")
		@ResponseStatus(HttpStatus.CREATED)
		@Idempotent
		Payment createOrder(@RequestBody PaymentRequest request) {
			int n = this.executions.increment("orders");
			return new Payment("order-" + n, request.orderNo(), request.amount(), "anonymous");
		}

		@PostMapping("/declining-payments")
		@Idempotent
		Payment decline(@RequestBody PaymentRequest request) {
			this.executions.increment("declining");
			throw new PaymentDeclinedException("Card declined for order " + request.orderNo());
		}

		@PostMapping("/cached-declines")
		@Idempotent(cacheFor = PaymentDeclinedException.class)
		Payment cachedDecline(@RequestBody PaymentRequest request) {
			int n = this.executions.increment("cached");
			throw new PaymentDeclinedException("Card declined (" + n + ") for " + request.orderNo());
		}

		@PostMapping("/empty-payments")
		@Idempotent
		void empty(@RequestBody PaymentRequest request) {
			this.executions.increment("empty");
		}

		@PostMapping("/storm-payments")
		@Idempotent(waitFor = "20s")
		Payment stormPay(@RequestBody PaymentRequest request) throws InterruptedException {
			Thread.sleep(200);
			int n = this.executions.increment("storm");
			return new Payment("storm-" + n, request.orderNo(), request.amount(), "anonymous");
		}

		@PostMapping("/optional-payments")
		@Idempotent(required = false)
		Payment optional(@RequestBody PaymentRequest request) {
			int n = this.executions.increment("optional");
			return new Payment("optional-" + n, request.orderNo(), request.amount(), "anonymous");
		}

		@PostMapping("/spel-payments")
		@Idempotent(key = "#idempotencyKey")
		Payment spel(@RequestHeader("Idempotency-Key") String idempotencyKey, @RequestBody PaymentRequest request) {
			int n = this.executions.increment("spel");
			return new Payment("spel-" + n, request.orderNo(), request.amount(), "anonymous");
		}

		// Scoped by its argument, and larger than the starter stores: sent as written.
		@PostMapping("/large-tenant-payments")
		@Idempotent(scope = "#tenant")
		String largeTenant(@RequestHeader("X-Tenant") String tenant, @RequestBody PaymentRequest request) {
			this.executions.increment("large");
			return "x".repeat(1100 * 1024);
		}

		@PostMapping("/refunds")
		Payment refund(@RequestBody PaymentRequest request) {
			throw new IllegalStateTransitionException(request.orderNo(), Status.CREATED, Status.REFUNDED,
					java.util.Set.of(Status.PAID));
		}

		@PostMapping(path = "/form-payments", consumes = "application/x-www-form-urlencoded")
		@Idempotent
		Payment form(@RequestParam String orderNo) {
			int n = this.executions.increment("form");
			return new Payment("form-" + n, orderNo, 1, "anonymous");
		}

		@PostMapping("/tenant-payments")
		@Idempotent(scope = "#tenant")
		Payment tenant(@RequestHeader("X-Tenant") String tenant, @RequestBody PaymentRequest request) {
			int n = this.executions.increment("tenant");
			return new Payment("tenant-" + n, request.orderNo(), request.amount(), tenant);
		}

	}

	/**
	 * The same payments, returning {@code CompletableFuture}s that complete on another
	 * thread.
	 */
	@RestController
	static class FuturePaymentsController {

		private final Executions executions;

		private final Gate gate;

		FuturePaymentsController(Executions executions, Gate gate) {
			this.executions = executions;
			this.gate = gate;
		}

		@PostMapping("/future-payments")
		@Idempotent
		CompletableFuture<ResponseEntity<Payment>> pay(@RequestBody PaymentRequest request) {
			return CompletableFuture.supplyAsync(() -> {
				int n = this.executions.increment("future-payments");
				Payment payment = new Payment("fpay-" + n + "-" + request.orderNo(), request.orderNo(),
						request.amount(), "anonymous");
				return ResponseEntity.status(HttpStatus.CREATED)
					.header("Location", "/payments/" + payment.id())
					.header("X-Payment-Id", payment.id())
					.body(payment);
			});
		}

		@PostMapping("/future-gated-payments")
		@Idempotent(waitFor = "${test.future-wait-for:0s}")
		CompletionStage<Payment> gated(@RequestBody PaymentRequest request) {
			return gatedPayment(request);
		}

		// Keyed by its argument: claimed when the handler is called, held once its future
		// completes.
		@PostMapping("/future-gated-orders")
		@Idempotent(key = "#request.orderNo")
		CompletionStage<Payment> gatedByOrder(@RequestBody PaymentRequest request) {
			return gatedPayment(request);
		}

		private CompletionStage<Payment> gatedPayment(PaymentRequest request) {
			return CompletableFuture.supplyAsync(() -> {
				int n = this.executions.increment("future-gated");
				try {
					this.gate.pass();
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
				return new Payment("fgated-" + n, request.orderNo(), request.amount(), "anonymous");
			});
		}

		// Scoped by its argument: claimed when the handler is called, as a future.
		@PostMapping("/future-tenant-payments")
		@Idempotent(scope = "#tenant")
		CompletableFuture<Payment> tenant(@RequestHeader("X-Tenant") String tenant,
				@RequestBody PaymentRequest request) {
			return CompletableFuture
				.supplyAsync(() -> new Payment("ftenant-" + this.executions.increment("future-tenant"),
						request.orderNo(), request.amount(), tenant));
		}

		@PostMapping("/mono-payments")
		@Idempotent
		Mono<Payment> mono(@RequestBody PaymentRequest request) {
			return Mono
				.fromSupplier(() -> new Payment("mono-" + this.executions.increment("mono"), request.orderNo(),
						request.amount(), "anonymous"))
				.subscribeOn(Schedulers.parallel());
		}

		// Scoped by its argument: claimed on subscription, as a Mono.
		@PostMapping("/mono-tenant-payments")
		@Idempotent(scope = "#tenant")
		Mono<Payment> monoTenant(@RequestHeader("X-Tenant") String tenant, @RequestBody PaymentRequest request) {
			return Mono
				.fromSupplier(() -> new Payment("mtenant-" + this.executions.increment("mono-tenant"),
						request.orderNo(), request.amount(), tenant))
				.subscribeOn(Schedulers.parallel());
		}

		@PostMapping("/mono-declining-payments")
		@Idempotent
		Mono<Payment> monoDecline(@RequestBody PaymentRequest request) {
			return Mono.defer(() -> {
				this.executions.increment("mono-declining");
				return Mono
					.<Payment>error(new PaymentDeclinedException("Card declined for order " + request.orderNo()));
			}).subscribeOn(Schedulers.parallel());
		}

		@PostMapping("/future-declining-payments")
		@Idempotent
		CompletableFuture<Payment> decline(@RequestBody PaymentRequest request) {
			return CompletableFuture.supplyAsync(() -> {
				this.executions.increment("future-declining");
				throw new PaymentDeclinedException("Card declined for order " + request.orderNo());
			});
		}

		@PostMapping("/future-cached-declines")
		@Idempotent(cacheFor = PaymentDeclinedException.class)
		CompletableFuture<Payment> cachedDecline(@RequestBody PaymentRequest request) {
			return CompletableFuture.supplyAsync(() -> {
				int n = this.executions.increment("future-cached");
				throw new PaymentDeclinedException("Card declined (" + n + ") for order " + request.orderNo());
			});
		}

	}

	public record Customer(String id) {
	}

	public record Order(String orderNo, Customer customer, long amount) {
	}

	@RestController
	static class KeyedController {

		private final Executions executions;

		KeyedController(Executions executions) {
			this.executions = executions;
		}

		@PostMapping("/keyed-payments")
		@Idempotent(key = "#request.orderNo")
		Payment keyed(@RequestBody PaymentRequest request) {
			int n = this.executions.increment("keyed");
			return new Payment("keyed-" + n, request.orderNo(), request.amount(), "anonymous");
		}

		@PostMapping("/customer-orders")
		@Idempotent(key = "#order.customer.id + ':' + #order.orderNo")
		Payment customerOrder(@RequestBody Order order) {
			int n = this.executions.increment("customer-orders");
			return new Payment("co-" + n, order.orderNo(), order.amount(), order.customer().id());
		}

	}

	@RestController
	static class SessionController {

		private final Executions executions;

		private final Ledger ledger;

		SessionController(Executions executions, Ledger ledger) {
			this.executions = executions;
			this.ledger = ledger;
		}

		@PostMapping("/logins")
		@Idempotent
		ResponseEntity<Payment> login(@RequestBody PaymentRequest request) {
			int n = this.executions.increment("logins");
			return ResponseEntity.status(HttpStatus.CREATED)
				.header("Set-Cookie", "SESSION=secret-" + n + "; HttpOnly")
				.header("WWW-Authenticate", "Bearer realm=\"demo\"")
				.header("X-Session-Token", "token-" + n)
				.header("X-Auth-Token", "auth-" + n)
				.header("X-API-Key", "key-" + n)
				.header("X-CSRF-TOKEN", "csrf-" + n)
				.header("X-Payment-Id", "login-" + n)
				.body(new Payment("login-" + n, request.orderNo(), request.amount(), "anonymous"));
		}

		@PostMapping("/ledgered-payments")
		@Idempotent
		Payment ledgered(@RequestBody PaymentRequest request) {
			int n = this.executions.increment("ledgered");
			return new Payment(this.ledger.record(request.orderNo()) + "-" + n, request.orderNo(), request.amount(),
					"anonymous");
		}

		@PostMapping("/declined-with-status")
		@Idempotent(cacheFor = RuntimeException.class)
		Payment declinedWithStatus(@RequestBody PaymentRequest request) {
			this.executions.increment("declined-with-status");
			throw new ResponseStatusException(HttpStatus.PAYMENT_REQUIRED, "Card declined");
		}

	}

	/**
	 * Two controllers with one simple name and one method signature, in two "packages".
	 */
	static class ShopA {

		@RestController
		static class Ledger {

			private final Executions executions;

			Ledger(Executions executions) {
				this.executions = executions;
			}

			@PostMapping("/a/ledger")
			@Idempotent
			Payment post(@RequestBody PaymentRequest request) {
				int n = this.executions.increment("a-ledger");
				return new Payment("a-" + n, request.orderNo(), request.amount(), "anonymous");
			}

		}

	}

	static class ShopB {

		@RestController
		static class Ledger {

			private final Executions executions;

			Ledger(Executions executions) {
				this.executions = executions;
			}

			@PostMapping("/b/ledger")
			@Idempotent
			Payment post(@RequestBody PaymentRequest request) {
				int n = this.executions.increment("b-ledger");
				return new Payment("b-" + n, request.orderNo(), request.amount(), "anonymous");
			}

		}

	}

	@RestControllerAdvice
	static class ApplicationErrors {

		@ExceptionHandler
		ResponseEntity<ProblemDetail> declined(PaymentDeclinedException ex) {
			return ResponseEntity.of(ProblemDetail.forStatusAndDetail(HttpStatus.PAYMENT_REQUIRED, ex.getMessage()))
				.build();
		}

	}

}
