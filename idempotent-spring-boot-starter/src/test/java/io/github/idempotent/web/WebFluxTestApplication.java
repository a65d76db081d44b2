package io.github.idempotent.web;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import java.sql.Connection;
import java.sql.SQLException;

import javax.sql.DataSource;

import io.netty.util.concurrent.FastThreadLocalThread;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.aopalliance.intercept.MethodInterceptor;
import org.springframework.aop.framework.ProxyFactory;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpStatus;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.core.context.ReactiveSecurityContextHolder;
import org.springframework.security.core.userdetails.MapReactiveUserDetailsService;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.bind.annotation.RestControllerAdvice;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.state.IllegalStateTransitionException;
import io.github.idempotent.store.IdempotencyStore;

/**
 * A small WebFlux payments API for the reactive HTTP contract tests. Every endpoint
 * counts its executions; the data source is wrapped so that a JDBC call made on a
 * non-blocking thread (a Netty event loop, Reactor's parallel scheduler) is recorded.
 * <p>
 * It scans nothing: its beans are its own nested components (registered with it) and the
 * controller it imports, so that the other test applications of this package, and their
 * controllers, stay out.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import({ ExactReplayWebFluxController.class, AsyncExactReplayController.class })
public class WebFluxTestApplication {

	@Bean
	SecurityWebFilterChain securityWebFilterChain(ServerHttpSecurity http) {
		return http.csrf(ServerHttpSecurity.CsrfSpec::disable)
			.authorizeExchange((exchanges) -> exchanges.anyExchange().permitAll())
			.httpBasic((basic) -> {
			})
			.build();
	}

	@Bean
	MapReactiveUserDetailsService users() {
		return new MapReactiveUserDetailsService(
				User.withUsername("alice").password("{noop}alice").roles("USER").build(),
				User.withUsername("bob").password("{noop}bob").roles("USER").build());
	}

	@Bean
	Executions executions() {
		return new Executions();
	}

	/**
	 * Records every blocking store primitive ({@code claim}, {@code complete},
	 * {@code release}, {@code renew}) and every JDBC connection taken on a thread that
	 * must not block: asynchronous callers must reach the store through its asynchronous
	 * API (Redis) or on the bounded elastic scheduler (JDBC).
	 */
	private static final Set<String> BLOCKING_PRIMITIVES = Set.of("claim", "complete", "release", "renew");

	@Bean
	static BeanPostProcessor blockingCallRecorder() {
		return new BeanPostProcessor() {

			@Override
			public Object postProcessAfterInitialization(Object bean, String beanName) {
				if (bean instanceof DataSource dataSource) {
					return new DelegatingDataSource(dataSource) {

						@Override
						public Connection getConnection() throws SQLException {
							checkMayBlock("JDBC connection");
							return super.getConnection();
						}

					};
				}
				if (bean instanceof IdempotencyStore) {
					ProxyFactory proxy = new ProxyFactory(bean);
					proxy.setProxyTargetClass(true);
					proxy.addAdvice((MethodInterceptor) (invocation) -> {
						if (BLOCKING_PRIMITIVES.contains(invocation.getMethod().getName())) {
							checkMayBlock("store " + invocation.getMethod().getName());
						}
						return invocation.proceed();
					});
					return proxy.getProxy();
				}
				return bean;
			}

		};
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

		/**
		 * Holds {@code /slow-payments} until a test opens it; open unless closed.
		 */
		volatile CompletableFuture<Boolean> gate = CompletableFuture.completedFuture(true);

		public void closeGate() {
			this.gate = new CompletableFuture<>();
		}

		public void openGate() {
			this.gate.complete(true);
		}

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
			openGate();
		}

	}

	/**
	 * Threads on which a blocking store method was called although they must never block.
	 */
	public static final List<String> blockingCallsOnNonBlockingThreads = new CopyOnWriteArrayList<>();

	static void checkMayBlock(String operation) {
		Thread thread = Thread.currentThread();
		// Netty's event loops (reactor-netty's and Lettuce's) are FastThreadLocalThreads;
		// Reactor's parallel and single schedulers mark theirs NonBlocking.
		if (Schedulers.isInNonBlockingThread() || thread instanceof FastThreadLocalThread) {
			blockingCallsOnNonBlockingThreads.add(operation + " on " + thread.getName());
		}
	}

	@RestController
	static class MonoPaymentsController {

		private final Executions executions;

		MonoPaymentsController(Executions executions) {
			this.executions = executions;
		}

		@PostMapping("/refunds")
		Mono<Payment> refund(@RequestBody PaymentRequest request) {
			return Mono.error(new IllegalStateTransitionException(request.orderNo(), WebTestApplication.Status.CREATED,
					WebTestApplication.Status.REFUNDED, Set.of(WebTestApplication.Status.PAID)));
		}

		@PostMapping("/payments")
		@Idempotent
		Mono<ResponseEntity<Payment>> pay(@RequestBody PaymentRequest request) {
			return ReactiveSecurityContextHolder.getContext()
				.map((security) -> security.getAuthentication().getName())
				.defaultIfEmpty("anonymous")
				.map((payer) -> {
					int n = this.executions.increment("payments");
					Payment payment = new Payment("pay-" + n + "-" + request.orderNo(), request.orderNo(),
							request.amount(), payer);
					return ResponseEntity.status(HttpStatus.CREATED)
						.header("Location", "/payments/" + payment.id())
						.header("X-Payment-Id", payment.id())
						.header("Cache-Control", "no-store")
						.body(payment);
				});
		}

		@PostMapping("/slow-payments")
		@Idempotent(waitFor = "${test.wait-for:0s}")
		Mono<Payment> slowPay(@RequestBody PaymentRequest request) {
			return Mono.defer(() -> {
				this.executions.increment("slow-started");
				return Mono.fromFuture(this.executions.gate);
			}).map((opened) -> {
				int n = this.executions.increment("slow");
				return new Payment("slow-" + n, request.orderNo(), request.amount(), "anonymous");
			});
		}

		@PostMapping("/storm-payments")
		@Idempotent(waitFor = "20s")
		Mono<Payment> stormPay(@RequestBody PaymentRequest request) {
			return Mono.delay(Duration.ofMillis(200)).map((tick) -> {
				int n = this.executions.increment("storm");
				return new Payment("storm-" + n, request.orderNo(), request.amount(), "anonymous");
			});
		}

		@PostMapping("/orders")
		@ResponseStatus(HttpStatus.CREATED)
		@Idempotent
		Mono<Payment> createOrder(@RequestBody PaymentRequest request) {
			return Mono.fromSupplier(() -> new Payment("order-" + this.executions.increment("orders"),
					request.orderNo(), request.amount(), "anonymous"));
		}

		@PostMapping("/optional-payments")
		@Idempotent(required = false)
		Mono<Payment> optional(@RequestBody PaymentRequest request) {
			return Mono.fromSupplier(() -> new Payment("optional-" + this.executions.increment("optional"),
					request.orderNo(), request.amount(), "anonymous"));
		}

		@PostMapping("/spel-payments")
		@Idempotent(key = "#idempotencyKey")
		Mono<Payment> spel(@RequestHeader("Idempotency-Key") String idempotencyKey,
				@RequestBody PaymentRequest request) {
			return Mono.fromSupplier(() -> new Payment("spel-" + this.executions.increment("spel"), request.orderNo(),
					request.amount(), "anonymous"));
		}

		@PostMapping("/tenant-payments")
		@Idempotent(scope = "#tenant")
		Mono<Payment> tenant(@RequestHeader("X-Tenant") String tenant, @RequestBody PaymentRequest request) {
			return Mono.fromSupplier(() -> new Payment("tenant-" + this.executions.increment("tenant"),
					request.orderNo(), request.amount(), tenant));
		}

		@PostMapping("/declining-payments")
		@Idempotent
		Mono<Payment> decline(@RequestBody PaymentRequest request) {
			return Mono.defer(() -> {
				this.executions.increment("declining");
				return Mono.error(new PaymentDeclinedException("Card declined for order " + request.orderNo()));
			});
		}

		@PostMapping("/cached-declines")
		@Idempotent(cacheFor = PaymentDeclinedException.class)
		Mono<Payment> cachedDecline(@RequestBody PaymentRequest request) {
			return Mono.defer(() -> {
				int n = this.executions.increment("cached");
				return Mono.error(new PaymentDeclinedException("Card declined (" + n + ") for " + request.orderNo()));
			});
		}

		@PostMapping("/empty-payments")
		@Idempotent
		Mono<Void> empty(@RequestBody PaymentRequest request) {
			return Mono.fromRunnable(() -> this.executions.increment("empty"));
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
