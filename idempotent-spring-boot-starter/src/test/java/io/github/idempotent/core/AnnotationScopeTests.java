package io.github.idempotent.core;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.security.authentication.UsernamePasswordAuthenticationToken;
import org.springframework.security.concurrent.DelegatingSecurityContextExecutor;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.authority.AuthorityUtils;
import org.springframework.security.core.context.ReactiveSecurityContextHolder;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.security.core.context.SecurityContextImpl;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.autoconfigure.IdempotentAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The scope of an {@code @Idempotent} call that names none: a blank one from the
 * application's resolver is refused on every path, as the template refuses it, and a call
 * that Spring Security can find no caller for fails and says how to name the scope.
 */
class AnnotationScopeTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(IdempotentAutoConfiguration.class, IdempotentAnnotationAutoConfiguration.class))
		.withBean(Charges.class)
		.withPropertyValues("idempotent.store.type=memory");

	@AfterEach
	void clear() {
		SecurityContextHolder.clearContext();
	}

	@Test
	void aBlankScopeFromTheResolverIsRefusedBeforeTheMethodRuns() {
		this.runner.withBean(IdempotencyScopeResolver.class, () -> () -> " ").run((context) -> {
			Charges charges = context.getBean(Charges.class);
			String key = UUID.randomUUID().toString();
			assertThatThrownBy(() -> charges.charge(key)).isInstanceOf(IdempotencyScopeException.class)
				.hasMessageContaining("blank");
			assertThatThrownBy(() -> charges.chargeMono(key).block(Duration.ofSeconds(10)))
				.isInstanceOf(IdempotencyScopeException.class)
				.hasMessageContaining("blank");
			assertThat(charges.runs()).isEqualTo(0);
		});
	}

	@Test
	void aCallWithoutACallerFailsAndSaysHowToNameTheScope() {
		this.runner.run((context) -> {
			Charges charges = context.getBean(Charges.class);
			assertThatThrownBy(() -> charges.charge(UUID.randomUUID().toString()))
				.isInstanceOf(IdempotencyScopeException.class)
				.hasMessageContaining("@Idempotent(scope = ");
			assertThat(charges.runs()).isEqualTo(0);
		});
	}

	@Test
	void aCallerOnTheThreadOrInTheReactorContextScopesTheCall() {
		this.runner.run((context) -> {
			Charges charges = context.getBean(Charges.class);
			String key = UUID.randomUUID().toString();
			SecurityContextHolder.getContext()
				.setAuthentication(UsernamePasswordAuthenticationToken.authenticated("alice", "n/a",
						AuthorityUtils.createAuthorityList("ROLE_USER")));
			String alice = charges.charge(key);
			SecurityContextHolder.clearContext();
			String bob = charges.chargeMono(key)
				.contextWrite(ReactiveSecurityContextHolder.withAuthentication(UsernamePasswordAuthenticationToken
					.authenticated("bob", "n/a", AuthorityUtils.createAuthorityList("ROLE_USER"))))
				.block(Duration.ofSeconds(10));
			assertThat(bob).isNotEqualTo(alice);
			assertThat(charges.runs()).isEqualTo(2);
		});
	}

	/**
	 * Without a caller in its Reactor context, a {@code Mono} method's call is its
	 * calling thread's caller's, never that of the thread it is subscribed on: here one
	 * whose security context is bob's. A calling thread without a caller fails on
	 * subscription, not at the call.
	 */
	@Test
	void aMonoCallWithoutAReactiveCallerIsItsCallingThreadsNeverItsSubscribingThreads() {
		ExecutorService executor = Executors.newSingleThreadExecutor();
		try {
			this.runner.run((context) -> {
				Charges charges = context.getBean(Charges.class);
				String key = UUID.randomUUID().toString();
				Scheduler bobs = Schedulers.fromExecutor(
						new DelegatingSecurityContextExecutor(executor, new SecurityContextImpl(user("bob"))));
				SecurityContextHolder.getContext().setAuthentication(user("bob"));
				String bob = charges.chargeMono(key).subscribeOn(bobs).block(Duration.ofSeconds(10));
				SecurityContextHolder.getContext().setAuthentication(user("alice"));
				String alice = charges.chargeMono(key).subscribeOn(bobs).block(Duration.ofSeconds(10));
				assertThat(alice).isNotEqualTo(bob);
				SecurityContextHolder.clearContext();
				Mono<String> nobodys = charges.chargeMono(key).subscribeOn(bobs);
				assertThatThrownBy(() -> nobodys.block(Duration.ofSeconds(10)))
					.isInstanceOf(IdempotencyScopeException.class);
				// The Reactor context answers before the calling thread.
				assertThat(charges.chargeMono(key)
					.subscribeOn(bobs)
					.contextWrite(ReactiveSecurityContextHolder.withAuthentication(user("alice")))
					.block(Duration.ofSeconds(10))).isEqualTo(alice);
				assertThat(charges.runs()).isEqualTo(2);
			});
		}
		finally {
			executor.shutdownNow();
		}
	}

	private static Authentication user(String name) {
		return UsernamePasswordAuthenticationToken.authenticated(name, "n/a",
				AuthorityUtils.createAuthorityList("ROLE_USER"));
	}

	@Test
	void aCallThatNamesItsScopeNeedsNoCaller() {
		this.runner.run((context) -> {
			Charges charges = context.getBean(Charges.class);
			String key = UUID.randomUUID().toString();
			assertThat(charges.chargeForJob(key)).isEqualTo(charges.chargeForJob(key));
			assertThat(charges.runs()).isEqualTo(1);
		});
	}

	static class Charges {

		private final AtomicInteger runs = new AtomicInteger();

		public int runs() {
			return this.runs.get();
		}

		@Idempotent(name = "charge", key = "#key")
		public String charge(String key) {
			return "receipt #" + this.runs.incrementAndGet();
		}

		@Idempotent(name = "charge", key = "#key")
		public Mono<String> chargeMono(String key) {
			return Mono.fromSupplier(() -> "receipt #" + this.runs.incrementAndGet());
		}

		@Idempotent(name = "nightly-charge", key = "#key", scope = "'nightly-job'")
		public String chargeForJob(String key) {
			return "receipt #" + this.runs.incrementAndGet();
		}

	}

}
