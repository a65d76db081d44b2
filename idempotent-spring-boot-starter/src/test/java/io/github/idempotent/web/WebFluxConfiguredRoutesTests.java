package io.github.idempotent.web;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.core.userdetails.MapReactiveUserDetailsService;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.web.server.SecurityWebFilterChain;

/**
 * Handlers guarded by configured routes on WebFlux.
 */
@SpringBootTest(classes = WebFluxConfiguredRoutesTests.App.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "idempotent.key-prefix=routes-flux" })
class WebFluxConfiguredRoutesTests extends AbstractConfiguredRoutesTests {

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(AbstractConfiguredRoutesTests.Controllers.class)
	static class App {

		@Bean
		SecurityWebFilterChain securityWebFilterChain(ServerHttpSecurity http) {
			return http.csrf(ServerHttpSecurity.CsrfSpec::disable)
				.authorizeExchange((exchanges) -> exchanges.anyExchange().authenticated())
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

	}

}
