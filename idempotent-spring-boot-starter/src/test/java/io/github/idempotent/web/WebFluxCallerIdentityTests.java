package io.github.idempotent.web;

import java.security.Principal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.MethodParameter;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.http.MediaType;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.core.userdetails.MapReactiveUserDetailsService;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.BindingContext;
import org.springframework.web.reactive.config.WebFluxConfigurer;
import org.springframework.web.reactive.result.method.HandlerMethodArgumentResolver;
import org.springframework.web.reactive.result.method.annotation.ArgumentResolverConfigurer;
import org.springframework.web.server.ServerWebExchange;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Who is calling travels with the call on WebFlux: a handler's key, scope and recorder
 * come from its own exchange, never from the thread its arguments happened to arrive on.
 * Users alice, bob and carol (the attacker) pay over HTTP Basic against a real Redis.
 */
@SpringBootTest(classes = WebFluxCallerIdentityTests.App.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "idempotent.store.type=redis",
				"idempotent.key-prefix=identity-flux" })
class WebFluxCallerIdentityTests {

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", TestRedis::host);
		registry.add("spring.data.redis.port", TestRedis::port);
	}

	/** Every run of a guarded method, as "method:user": kept outside the store. */
	static final List<String> ledger = new CopyOnWriteArrayList<>();

	@LocalServerPort
	private int port;

	@Autowired
	private StringRedisTemplate redis;

	private WebTestClient client;

	@BeforeEach
	void client() {
		this.client = WebTestClient.bindToServer()
			.baseUrl("http://127.0.0.1:" + this.port)
			.responseTimeout(Duration.ofSeconds(30))
			.build();
		ledger.clear();
	}

	/**
	 * A split bill: each participant's ticket resolves when the last one joins, so
	 * alice's and bob's handlers are called from within carol's request. Each must still
	 * run under its own caller's key and scope, and carol's retry must replay only
	 * carol's payment.
	 */
	@Test
	void handlersReleasedByAnotherRequestsSignalRunUnderTheirOwnCaller() throws Exception {
		String group = UUID.randomUUID().toString();
		String aliceKey = "KEY-ALICE-" + group;
		String bobKey = "KEY-BOB-" + group;
		String carolKey = "KEY-CAROL-" + group;
		CompletableFuture<EntityExchangeResult<String>> alice = CompletableFuture
			.supplyAsync(() -> post("/split/pay", "alice", aliceKey, group));
		awaitWaiting(group, 1);
		CompletableFuture<EntityExchangeResult<String>> bob = CompletableFuture
			.supplyAsync(() -> post("/split/pay", "bob", bobKey, group));
		awaitWaiting(group, 2);
		EntityExchangeResult<String> carol = post("/split/pay", "carol", carolKey, group);

		assertRanFor(alice.get(30, TimeUnit.SECONDS), "alice");
		assertRanFor(bob.get(30, TimeUnit.SECONDS), "bob");
		assertRanFor(carol, "carol");
		assertThat(ledger).containsExactlyInAnyOrder("split:alice", "split:bob", "split:carol");

		EntityExchangeResult<String> carolRetry = post("/split/pay", "carol", carolKey, group);
		assertRanFor(carolRetry, "carol");
		assertThat(carolRetry.getResponseHeaders().getFirst("Idempotent-Replayed")).isEqualTo("true");
		assertThat(carolRetry.getResponseBody()).isEqualTo(carol.getResponseBody());
		assertThat(recordsHolding(group, "card-of-alice")).singleElement().asString().contains("u=alice");
		assertThat(recordsHolding(group, "card-of-bob")).singleElement().asString().contains("u=bob");
		assertThat(ledger).hasSize(3);
	}

	/**
	 * A handler whose argument arrives on another thread (an R2DBC or WebClient lookup)
	 * is guarded all the same: the same key three times runs once.
	 */
	@Test
	void aHandlerWhoseArgumentArrivesOnAnotherThreadIsGuarded() {
		String key = UUID.randomUUID().toString();
		EntityExchangeResult<String> first = post("/accounts/pay", "alice", key, "{\"amount\":10}");
		EntityExchangeResult<String> second = post("/accounts/pay", "alice", key, "{\"amount\":10}");
		EntityExchangeResult<String> third = post("/accounts/pay", "alice", key, "{\"amount\":10}");
		assertThat(first.getStatus().value()).isEqualTo(200);
		assertThat(second.getResponseBody()).isEqualTo(first.getResponseBody());
		assertThat(third.getResponseHeaders().getFirst("Idempotent-Replayed")).isEqualTo("true");
		assertThat(ledger).containsExactly("account:alice");
	}

	@Test
	void aRequiredKeyOfAHandlerWhoseArgumentArrivesOnAnotherThreadIsTheHeader() {
		String key = UUID.randomUUID().toString();
		EntityExchangeResult<String> first = post("/accounts/pay-required", "bob", key, "{\"amount\":10}");
		EntityExchangeResult<String> second = post("/accounts/pay-required", "bob", key, "{\"amount\":10}");
		assertThat(first.getStatus().value()).isEqualTo(200);
		assertThat(second.getStatus().value()).isEqualTo(200);
		assertThat(second.getResponseHeaders().getFirst("Idempotent-Replayed")).isEqualTo("true");
		assertThat(ledger).containsExactly("account:bob");
	}

	private List<String> recordsHolding(String group, String secret) {
		List<String> holding = new ArrayList<>();
		for (String key : this.redis.keys("identity-flux:*" + group)) {
			String value = this.redis.opsForValue().get(key);
			if (value != null && value.contains(secret)) {
				holding.add(key);
			}
		}
		return holding;
	}

	private static void assertRanFor(EntityExchangeResult<String> result, String user) {
		assertThat(result.getStatus().value()).as(result.toString()).isEqualTo(200);
		assertThat(result.getResponseBody()).contains("\"ranFor\":\"" + user + "\"").contains("card-of-" + user);
	}

	private static void awaitWaiting(String group, int count) throws InterruptedException {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
		while (SplitBill.waiting(group) < count) {
			assertThat(System.nanoTime()).as("participants waiting").isLessThan(deadline);
			Thread.sleep(10);
		}
	}

	private EntityExchangeResult<String> post(String path, String user, String key, String groupOrBody) {
		boolean body = groupOrBody.startsWith("{");
		return this.client.post().uri(body ? path : path + "?group=" + groupOrBody).headers((headers) -> {
			headers.setBasicAuth(user, user);
			headers.set("Idempotency-Key", key);
		})
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(body ? groupOrBody : "{\"note\":\"split\"}")
			.exchange()
			.expectBody(String.class)
			.returnResult();
	}

	record GroupTicket(String user, String secret) {
	}

	record Account(String owner) {
	}

	/**
	 * The participants of each group: everyone's ticket resolves when the third joins, on
	 * the thread of the request that completes the group.
	 */
	static final class SplitBill {

		private static final Map<String, Sinks.One<Boolean>> groups = new ConcurrentHashMap<>();

		private static final Map<String, Integer> joined = new ConcurrentHashMap<>();

		static Mono<GroupTicket> join(String group, String user) {
			Sinks.One<Boolean> full = groups.computeIfAbsent(group, (g) -> Sinks.one());
			int count = joined.merge(group, 1, Integer::sum);
			Mono<GroupTicket> ticket = full.asMono().map((ignored) -> new GroupTicket(user, "card-of-" + user));
			if (count == 3) {
				full.tryEmitValue(true);
			}
			return ticket;
		}

		static int waiting(String group) {
			return joined.getOrDefault(group, 0);
		}

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(Controllers.class)
	static class App implements WebFluxConfigurer {

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
					User.withUsername("bob").password("{noop}bob").roles("USER").build(),
					User.withUsername("carol").password("{noop}carol").roles("USER").build());
		}

		@Override
		public void configureArgumentResolvers(ArgumentResolverConfigurer configurer) {
			configurer.addCustomResolver(new HandlerMethodArgumentResolver() {

				@Override
				public boolean supportsParameter(MethodParameter parameter) {
					return parameter.getParameterType() == GroupTicket.class
							|| parameter.getParameterType() == Account.class;
				}

				@Override
				public Mono<Object> resolveArgument(MethodParameter parameter, BindingContext bindingContext,
						ServerWebExchange exchange) {
					if (parameter.getParameterType() == Account.class) {
						// Looked up on another thread, as an R2DBC or WebClient call
						// would.
						return exchange.getPrincipal()
							.publishOn(Schedulers.boundedElastic())
							.map((principal) -> new Account(principal.getName()));
					}
					String group = exchange.getRequest().getQueryParams().getFirst("group");
					return exchange.getPrincipal().flatMap((principal) -> SplitBill.join(group, principal.getName()));
				}

			});
		}

	}

	@RestController
	static class Controllers {

		@PostMapping("/split/pay")
		@Idempotent
		Map<String, String> pay(Principal principal, GroupTicket ticket) {
			ledger.add("split:" + principal.getName());
			return Map.of("ranFor", principal.getName(), "secret", ticket.secret());
		}

		@PostMapping("/accounts/pay")
		@Idempotent(required = false)
		CompletableFuture<Map<String, Object>> payFromAccount(Account account, @RequestBody Map<String, Object> body) {
			ledger.add("account:" + account.owner());
			return CompletableFuture.completedFuture(Map.of("owner", account.owner(), "amount", body.get("amount")));
		}

		@PostMapping("/accounts/pay-required")
		@Idempotent
		CompletableFuture<Map<String, Object>> payFromAccountRequired(Account account,
				@RequestBody Map<String, Object> body) {
			ledger.add("account:" + account.owner());
			return CompletableFuture.completedFuture(Map.of("owner", account.owner(), "amount", body.get("amount")));
		}

	}

}
