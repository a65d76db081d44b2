package smoketest.jdbc.mariadb;

import java.security.Principal;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.idempotent.annotation.Idempotent;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

@SpringBootApplication
public class SmokeApplication {

	public static void main(String[] args) {
		SpringApplication.run(SmokeApplication.class, args);
	}

	@Bean
	InMemoryUserDetailsManager users() {
		return new InMemoryUserDetailsManager(User.withUsername("alice").password("{noop}alice-password").build(),
				User.withUsername("bob").password("{noop}bob-password").build());
	}

	@Bean
	SecurityFilterChain api(HttpSecurity http) throws Exception {
		return http.authorizeHttpRequests((requests) -> requests.anyRequest().authenticated())
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
		public Map<String, Object> pay(@RequestBody Map<String, Object> payment, Principal payer) throws Exception {
			this.executions.computeIfAbsent(payer.getName(), (name) -> new AtomicInteger()).incrementAndGet();
			this.released.get(2, TimeUnit.MINUTES);
			return Map.of("id", UUID.randomUUID().toString(), "amount", payment.get("amount"), "payer",
					payer.getName());
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
