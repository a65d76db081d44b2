package io.github.idempotent.web;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;

/**
 * Handlers guarded by configured routes on Spring MVC.
 */
@SpringBootTest(classes = MvcConfiguredRoutesTests.App.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = "idempotent.key-prefix=routes-mvc")
class MvcConfiguredRoutesTests extends AbstractConfiguredRoutesTests {

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(AbstractConfiguredRoutesTests.Controllers.class)
	static class App {

		@Bean
		SecurityFilterChain securityFilterChain(HttpSecurity http) throws Exception {
			return http.csrf((csrf) -> csrf.disable())
				.authorizeHttpRequests((requests) -> requests.anyRequest().authenticated())
				.httpBasic((basic) -> {
				})
				.build();
		}

		@Bean
		InMemoryUserDetailsManager users() {
			return new InMemoryUserDetailsManager(
					User.withUsername("alice").password("{noop}alice").roles("USER").build(),
					User.withUsername("bob").password("{noop}bob").roles("USER").build());
		}

	}

}
