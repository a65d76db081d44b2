package io.github.idempotent.web;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import org.aopalliance.intercept.MethodInterceptor;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.aop.framework.ProxyFactory;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.stereotype.Service;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.server.WebFilter;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.store.IdempotencyStore;

/**
 * A WebFlux application whose guarded code does what applications do: calls Redis through
 * the {@link StringRedisTemplate} it already has, blocking. Each endpoint answers with
 * the names of the threads its code ran on.
 * <p>
 * It scans nothing: its beans are its own nested components (registered with it), so that
 * the other test applications of this package, and their controllers, stay out.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
public class ThreadsTestApplication {

	@Bean
	SecurityWebFilterChain securityWebFilterChain(ServerHttpSecurity http) {
		return http.csrf(ServerHttpSecurity.CsrfSpec::disable)
			.authorizeExchange((exchanges) -> exchanges.anyExchange().permitAll())
			.build();
	}

	/**
	 * What applications do before a response is sent (security headers, an audit
	 * counter): an action on the response's commit that calls Redis, blocking, and says
	 * in a header which thread it ran on.
	 */
	@Bean
	WebFilter commitAction(StringRedisTemplate redis) {
		return (exchange, chain) -> {
			if (!exchange.getRequest().getPath().value().equals("/threads/mono")) {
				return chain.filter(exchange);
			}
			exchange.getResponse().beforeCommit(() -> {
				exchange.getResponse().getHeaders().set("X-Committed-On", Thread.currentThread().getName());
				redis.opsForValue().increment("threads-test:commits");
				return Mono.empty();
			});
			return chain.filter(exchange);
		};
	}

	@Bean
	Gate gate() {
		return new Gate();
	}

	/**
	 * Counts the store's claims, so that a test knows a duplicate is waiting (it has
	 * claimed again) before it lets the first call end.
	 */
	@Bean
	static BeanPostProcessor claimCounter() {
		return new BeanPostProcessor() {

			@Override
			public Object postProcessAfterInitialization(Object bean, String beanName) {
				if (bean instanceof IdempotencyStore) {
					ProxyFactory proxy = new ProxyFactory(bean);
					proxy.setProxyTargetClass(true);
					proxy.addAdvice((MethodInterceptor) (invocation) -> {
						if (invocation.getMethod().getName().startsWith("claim")) {
							Gate.claims.incrementAndGet();
						}
						else if (invocation.getMethod().getName().equals("renew")) {
							Gate.renewals.incrementAndGet();
						}
						return invocation.proceed();
					});
					return proxy.getProxy();
				}
				return bean;
			}

		};
	}

	/**
	 * Holds the first call of the future endpoints until a test opens it.
	 */
	public static class Gate {

		static final AtomicInteger claims = new AtomicInteger();

		static final AtomicInteger renewals = new AtomicInteger();

		final AtomicInteger runs = new AtomicInteger();

		volatile CompletableFuture<Boolean> open = new CompletableFuture<>();

		public int claims() {
			return claims.get();
		}

		public int renewals() {
			return renewals.get();
		}

		public int runs() {
			return this.runs.get();
		}

		public void close() {
			this.runs.set(0);
			this.open = new CompletableFuture<>();
		}

		public void open() {
			this.open.complete(true);
		}

	}

	@RestController
	static class MonoController {

		private final StringRedisTemplate redis;

		private final Gate gate;

		MonoController(StringRedisTemplate redis, Gate gate) {
			this.redis = redis;
			this.gate = gate;
		}

		/**
		 * Calls nothing that blocks; its first run waits for the gate, and ends on a
		 * thread that must not block, as one that ends on an event loop would.
		 */
		@PostMapping("/threads/gated-mono")
		@Idempotent(lease = "${threads-test.lease:30s}", waitFor = "20s")
		Mono<Map<String, Object>> gated() {
			return Mono.defer(() -> {
				int run = this.gate.runs.incrementAndGet();
				Mono<Boolean> opened = (run > 1) ? Mono.just(true) : Mono.fromFuture(this.gate.open);
				return opened.publishOn(Schedulers.parallel()).map((open) -> Map.<String, Object>of("run", run));
			});
		}

		@PostMapping("/threads/mono")
		@Idempotent
		Mono<Map<String, Object>> mono(@RequestBody(required = false) String order) {
			return plain(order);
		}

		/**
		 * The same handler without the annotation: where its code runs is where the
		 * guarded one's should. Both read the request's body, as the guard does to
		 * fingerprint it: both run where the body arrived.
		 */
		@PostMapping("/threads/plain-mono")
		Mono<Map<String, Object>> plain(@RequestBody(required = false) String order) {
			String assembledOn = Thread.currentThread().getName();
			return Mono.fromSupplier(() -> {
				Map<String, Object> body = new LinkedHashMap<>();
				body.put("assembledOn", assembledOn);
				body.put("ranOn", Thread.currentThread().getName());
				body.put("count", this.redis.opsForValue().increment("threads-test:mono-runs"));
				return body;
			});
		}

	}

	@Service
	static class FuturePayments {

		private final StringRedisTemplate redis;

		private final Gate gate;

		FuturePayments(StringRedisTemplate redis, Gate gate) {
			this.redis = redis;
			this.gate = gate;
		}

		/**
		 * The first run waits for the gate, then fails or succeeds as {@code outcome}
		 * says; every run calls Redis where its code runs.
		 */
		@Idempotent(key = "#key", scope = "'threads-test'", waitFor = "20s")
		public CompletableFuture<Map<String, Object>> pay(String key, String outcome) {
			int run = this.gate.runs.incrementAndGet();
			Map<String, Object> body = new LinkedHashMap<>();
			body.put("run", run);
			body.put("ranOn", Thread.currentThread().getName());
			body.put("count", this.redis.opsForValue().increment("threads-test:future-runs"));
			if (run > 1) {
				return CompletableFuture.completedFuture(body);
			}
			return this.gate.open.thenApply((opened) -> {
				if (outcome.equals("fail")) {
					throw new PaymentDeclinedException();
				}
				return body;
			});
		}

	}

	@RestController
	static class FutureController {

		private final FuturePayments payments;

		private final StringRedisTemplate redis;

		FutureController(FuturePayments payments, StringRedisTemplate redis) {
			this.payments = payments;
			this.redis = redis;
		}

		/**
		 * The caller's own continuation, which also calls Redis, on the thread that
		 * completes the guarded future.
		 */
		@PostMapping("/threads/future/{key}/{outcome}")
		CompletableFuture<Map<String, Object>> pay(@PathVariable String key, @PathVariable String outcome) {
			return this.payments.pay(key, outcome).thenApply((result) -> {
				Map<String, Object> body = new LinkedHashMap<>(result);
				body.put("completedOn", Thread.currentThread().getName());
				body.put("seen", this.redis.opsForValue().increment("threads-test:future-seen"));
				return body;
			});
		}

	}

	static class PaymentDeclinedException extends RuntimeException {

		PaymentDeclinedException() {
			super("Card declined");
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
