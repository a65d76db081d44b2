package io.github.idempotent.actuate;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;

/**
 * An application with Actuator and two {@code @Idempotent} endpoints: orders, and one
 * whose first call hangs until the test lets it go (a stuck key), in
 * {@link OrderController}. Security lets every request through and authenticates those
 * that bring HTTP Basic credentials: {@code ops} has the role {@code OPS}, {@code alice}
 * only {@code USER}.
 */
@SpringBootApplication
public class ActuatorTestApplication {

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
		return new InMemoryUserDetailsManager(User.withUsername("ops").password("{noop}ops").roles("OPS").build(),
				User.withUsername("alice").password("{noop}alice").roles("USER").build());
	}

	public record OrderRequest(String item) {
	}

	public record Order(int number, String item) {
	}

}
