package smoketest.webflux.security;

import java.security.Principal;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.idempotent.annotation.Idempotent;
import reactor.core.publisher.Mono;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.core.userdetails.MapReactiveUserDetailsService;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

@SpringBootApplication
public class SmokeApplication {

	public static void main(String[] args) {
		SpringApplication.run(SmokeApplication.class, args);
	}

	@Bean
	MapReactiveUserDetailsService users() {
		return new MapReactiveUserDetailsService(User.withUsername("alice").password("{noop}alice-password").build(),
				User.withUsername("bob").password("{noop}bob-password").build());
	}

	@Bean
	SecurityWebFilterChain api(ServerHttpSecurity http) {
		return http.authorizeExchange((exchanges) -> exchanges.anyExchange().authenticated())
			.httpBasic(Customizer.withDefaults())
			.csrf((csrf) -> csrf.disable())
			.build();
	}

	@RestController
	public static class PaymentController {

		private final Map<String, AtomicInteger> executions = new ConcurrentHashMap<>();

		/**
		 * Holds each payment until the test lets it finish, so that the storm's
		 * duplicates overlap it.
		 */
		private final CompletableFuture<Void> released = new CompletableFuture<>();

		@PostMapping("/payments")
		@Idempotent
		public Mono<Map<String, Object>> pay(@RequestBody Map<String, Object> payment, Principal payer) {
			return Mono.defer(() -> {
				this.executions.computeIfAbsent(payer.getName(), (name) -> new AtomicInteger()).incrementAndGet();
				return Mono.fromFuture(this.released)
					.then(Mono.just(Map.of("id", UUID.randomUUID().toString(), "amount", payment.get("amount"), "payer",
							payer.getName())));
			});
		}

		public int executions(String payer) {
			AtomicInteger executions = this.executions.get(payer);
			return (executions != null) ? executions.get() : 0;
		}

		public void release() {
			this.released.complete(null);
		}

	}

}
