package io.github.idempotent.core;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.security.authentication.AnonymousAuthenticationToken;
import org.springframework.security.authentication.UsernamePasswordAuthenticationToken;
import org.springframework.security.concurrent.DelegatingSecurityContextExecutor;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.authority.AuthorityUtils;
import org.springframework.security.core.context.ReactiveSecurityContextHolder;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.security.core.context.SecurityContextImpl;

import io.github.idempotent.autoconfigure.IdempotentAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The template's default scope is the caller's wherever the caller lives: the Reactor
 * context of {@code executeMono}, the thread of a blocking call. Where Spring Security is
 * present and neither holds a caller (an executor thread, a reactive call without a
 * security context), the call fails with a message that says how to pass the scope,
 * rather than share the global scope with every other caller.
 */
class IdempotencyTemplateScopeTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class, IdempotentAutoConfiguration.class))
		.withPropertyValues("idempotent.store.type=memory");

	private final ExecutorService executor = Executors.newSingleThreadExecutor();

	private final AtomicInteger charges = new AtomicInteger();

	@AfterEach
	void stop() throws InterruptedException {
		this.executor.shutdownNow();
		this.executor.awaitTermination(10, TimeUnit.SECONDS);
		SecurityContextHolder.clearContext();
	}

	@Test
	void reactiveCallersOfOneKeyEachGetTheirOwnReceipt() {
		this.runner.run((context) -> {
			IdempotencyTemplate template = context.getBean(IdempotencyTemplate.class);
			String key = UUID.randomUUID().toString();
			String alice = chargeMono(template, key)
				.contextWrite(ReactiveSecurityContextHolder.withAuthentication(user("alice")))
				.block(Duration.ofSeconds(10));
			String bob = chargeMono(template, key)
				.contextWrite(ReactiveSecurityContextHolder.withAuthentication(user("bob")))
				.block(Duration.ofSeconds(10));
			String aliceAgain = chargeMono(template, key)
				.contextWrite(ReactiveSecurityContextHolder.withAuthentication(user("alice")))
				.block(Duration.ofSeconds(10));
			assertThat(bob).isNotEqualTo(alice);
			assertThat(aliceAgain).isEqualTo(alice);
			assertThat(this.charges).hasValue(2);
		});
	}

	@Test
	void aReactiveCallWithoutASecurityContextFailsAndSaysHowToPassTheScope() {
		this.runner.run((context) -> {
			IdempotencyTemplate template = context.getBean(IdempotencyTemplate.class);
			Mono<String> charge = chargeMono(template, UUID.randomUUID().toString());
			assertThatThrownBy(() -> charge.block(Duration.ofSeconds(10))).isInstanceOf(IdempotencyScopeException.class)
				.hasMessageContaining(".scope(...)")
				.hasMessageContaining("ReactiveSecurityContextHolder.withAuthentication");
			assertThat(this.charges).hasValue(0);
		});
	}

	/**
	 * Without a caller in its Reactor context, a call is its calling thread's caller's,
	 * never that of the thread it is subscribed on: here one whose security context is
	 * bob's. A calling thread without a caller fails on subscription, not at the call.
	 */
	@Test
	void aReactiveCallWithoutAReactiveCallerIsItsCallingThreadsNeverItsSubscribingThreads() {
		this.runner.run((context) -> {
			IdempotencyTemplate template = context.getBean(IdempotencyTemplate.class);
			String key = UUID.randomUUID().toString();
			Scheduler bobs = Schedulers.fromExecutor(propagating(this.executor, user("bob")));
			SecurityContextHolder.getContext().setAuthentication(user("bob"));
			String bob = chargeMono(template, key).subscribeOn(bobs).block(Duration.ofSeconds(10));
			SecurityContextHolder.getContext().setAuthentication(user("alice"));
			String alice = chargeMono(template, key).subscribeOn(bobs).block(Duration.ofSeconds(10));
			assertThat(alice).isNotEqualTo(bob);
			SecurityContextHolder.clearContext();
			Mono<String> nobodys = chargeMono(template, key).subscribeOn(bobs);
			assertThatThrownBy(() -> nobodys.block(Duration.ofSeconds(10)))
				.isInstanceOf(IdempotencyScopeException.class);
			assertThat(this.charges).hasValue(2);
		});
	}

	@Test
	void aBlockingCallOnAThreadWithoutACallerFailsAndSaysHowToPassTheScope() {
		this.runner.run((context) -> {
			IdempotencyTemplate template = context.getBean(IdempotencyTemplate.class);
			SecurityContextHolder.getContext().setAuthentication(user("alice"));
			// The caller's thread knows alice; the executor's thread does not.
			CompletableFuture<String> charge = CompletableFuture
				.supplyAsync(() -> charge(template, UUID.randomUUID().toString()), this.executor);
			assertThat(charge).failsWithin(Duration.ofSeconds(10))
				.withThrowableThat()
				.havingCause()
				.isInstanceOf(IdempotencyScopeException.class)
				.withMessageContaining(".scope(...)")
				.withMessageContaining("DelegatingSecurityContextExecutor");
			assertThat(this.charges).hasValue(0);
		});
	}

	@Test
	void aBlockingCallOnAThreadThatTheCallersContextWasPropagatedToIsTheCallers() {
		this.runner.run((context) -> {
			IdempotencyTemplate template = context.getBean(IdempotencyTemplate.class);
			String key = UUID.randomUUID().toString();
			String alice = CompletableFuture
				.supplyAsync(() -> charge(template, key), propagating(this.executor, user("alice")))
				.get(10, TimeUnit.SECONDS);
			String bob = CompletableFuture
				.supplyAsync(() -> charge(template, key), propagating(this.executor, user("bob")))
				.get(10, TimeUnit.SECONDS);
			assertThat(bob).isNotEqualTo(alice);
			assertThat(this.charges).hasValue(2);
		});
	}

	@Test
	void aCallThatNamesItsScopeNeedsNoCaller() {
		this.runner.run((context) -> {
			IdempotencyTemplate template = context.getBean(IdempotencyTemplate.class);
			String key = UUID.randomUUID().toString();
			String first = CompletableFuture.supplyAsync(() -> chargeIn(template, "nightly-job", key), this.executor)
				.get(10, TimeUnit.SECONDS);
			String again = chargeIn(template, "nightly-job", key);
			String reactive = template.operation("charge")
				.key(key)
				.scope("nightly-job")
				.executeMono(String.class, () -> Mono.fromSupplier(() -> "receipt #" + this.charges.incrementAndGet()))
				.block(Duration.ofSeconds(10));
			assertThat(again).isEqualTo(first);
			assertThat(reactive).isEqualTo(first);
			assertThat(this.charges).hasValue(1);
		});
	}

	@Test
	void anonymousCallersShareTheAnonymousScope() {
		this.runner.run((context) -> {
			IdempotencyTemplate template = context.getBean(IdempotencyTemplate.class);
			String key = UUID.randomUUID().toString();
			Authentication anonymous = new AnonymousAuthenticationToken("key", "anonymousUser",
					AuthorityUtils.createAuthorityList("ROLE_ANONYMOUS"));
			String first = chargeMono(template, key)
				.contextWrite(ReactiveSecurityContextHolder.withAuthentication(anonymous))
				.block(Duration.ofSeconds(10));
			SecurityContextHolder.getContext().setAuthentication(anonymous);
			String second = charge(template, key);
			assertThat(second).isEqualTo(first);
			assertThat(this.charges).hasValue(1);
		});
	}

	@Test
	void theGlobalDefaultScopeNeedsNoCaller() {
		this.runner.withPropertyValues("idempotent.default-scope=global").run((context) -> {
			IdempotencyTemplate template = context.getBean(IdempotencyTemplate.class);
			String key = UUID.randomUUID().toString();
			String first = CompletableFuture.supplyAsync(() -> charge(template, key), this.executor)
				.get(10, TimeUnit.SECONDS);
			assertThat(charge(template, key)).isEqualTo(first);
			assertThat(this.charges).hasValue(1);
		});
	}

	private Mono<String> chargeMono(IdempotencyTemplate template, String key) {
		return template.operation("charge")
			.key(key)
			.executeMono(String.class, () -> Mono.fromSupplier(() -> "receipt #" + this.charges.incrementAndGet()));
	}

	private String charge(IdempotencyTemplate template, String key) {
		return template.operation("charge")
			.key(key)
			.execute(String.class, () -> "receipt #" + this.charges.incrementAndGet());
	}

	private String chargeIn(IdempotencyTemplate template, String scope, String key) {
		return template.operation("charge")
			.key(key)
			.scope(scope)
			.execute(String.class, () -> "receipt #" + this.charges.incrementAndGet());
	}

	private static DelegatingSecurityContextExecutor propagating(ExecutorService executor, Authentication user) {
		return new DelegatingSecurityContextExecutor(executor, new SecurityContextImpl(user));
	}

	private static Authentication user(String name) {
		return UsernamePasswordAuthenticationToken.authenticated(name, "n/a",
				AuthorityUtils.createAuthorityList("ROLE_USER"));
	}

}
