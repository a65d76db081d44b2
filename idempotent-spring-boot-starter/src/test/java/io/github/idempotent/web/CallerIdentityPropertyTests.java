package io.github.idempotent.web;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.stream.Collectors;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.MethodParameter;
import org.springframework.http.ResponseEntity;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.core.userdetails.MapReactiveUserDetailsService;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.core.userdetails.UserDetails;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.reactive.BindingContext;
import org.springframework.web.reactive.config.WebFluxConfigurer;
import org.springframework.web.reactive.result.method.HandlerMethodArgumentResolver;
import org.springframework.web.reactive.result.method.annotation.ArgumentResolverConfigurer;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.testsupport.Draw;
import io.github.idempotent.testsupport.TestRedis;
import io.github.idempotent.testsupport.Tries;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * No caller ever receives a record written for another, and every guarded call that ran
 * was guarded, whatever the stack, the handler's return type and the thread its work runs
 * on. Each try draws a scenario: two authenticated callers (alice, bob) send keys and
 * bodies (some equal by value only) to handlers returning a value, a
 * {@code ResponseEntity}, a future, a {@code Mono} or a Kotlin {@code suspend} result, on
 * Spring MVC and WebFlux, against one Redis; some calls are released by the next
 * request's signal (a shared sink or future completed from inside the other request). A
 * model of what each caller may get checks every answer, and a ledger outside the store
 * counts the runs. The seed of a failing try is in its message ({@link Tries}).
 */
class CallerIdentityPropertyTests {

	/**
	 * Bodies, with the class of equal ones: 12.50 is 12.5, 10 is 1e1.
	 */
	private static final List<String> BODIES = List.of("{\"amount\":12.50}", "{ \"amount\": 12.5 }", "{\"amount\":10}",
			"{\"amount\":1e1}", "{\"amount\":10,\"note\":\"x\"}");

	private static final int[] BODY_CLASS = { 0, 0, 1, 1, 2 };

	private static final List<String> ledger = new CopyOnWriteArrayList<>();

	private static final AtomicInteger runs = new AtomicInteger();

	private static final AtomicInteger executions = new AtomicInteger();

	private static final Map<String, CompletableFuture<Boolean>> futureGates = new ConcurrentHashMap<>();

	private static final Map<String, Sinks.One<Boolean>> sinkGates = new ConcurrentHashMap<>();

	private static final Map<String, AtomicInteger> waiting = new ConcurrentHashMap<>();

	private static ConfigurableApplicationContext mvc;

	private static ConfigurableApplicationContext flux;

	private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	@BeforeAll
	static void start() {
		// Prefixes of this build alone: records of earlier builds live on in Redis.
		String build = Long.toHexString(System.nanoTime());
		mvc = start(MvcApp.class, WebApplicationType.SERVLET, "prop-mvc-" + build);
		flux = start(FluxApp.class, WebApplicationType.REACTIVE, "prop-flux-" + build);
	}

	private static ConfigurableApplicationContext start(Class<?> app, WebApplicationType type, String prefix) {
		return new SpringApplicationBuilder(app).web(type)
			.properties("server.port=0", "spring.main.banner-mode=off", "idempotent.store.type=redis",
					"idempotent.key-prefix=" + prefix, "spring.data.redis.host=" + TestRedis.host(),
					"spring.data.redis.port=" + TestRedis.port())
			.run();
	}

	@AfterAll
	static void stop() {
		if (mvc != null) {
			mvc.close();
		}
		if (flux != null) {
			flux.close();
		}
	}

	@Test
	void noCallerEverReceivesARecordWrittenForAnother() {
		Tries.check(12, CallerIdentityPropertyTests::scenario, this::play);
	}

	private static Scenario scenario(Draw draw) {
		List<Step> steps = draw.list(1, 12, () -> new Step(draw.choice(Stack.values()), draw.choice(Type.values()),
				draw.choice(Caller.values()), draw.between(1, 2), draw.between(0, BODIES.size() - 1)));
		return new Scenario(0, steps);
	}

	private void play(Scenario drawn) {
		// A run of its own each time, so that shrinking, which plays a scenario again,
		// starts from no records. The drawn id alone would not do: draws favour edge
		// values, which come again in the next build against the same Redis.
		Scenario scenario = new Scenario(executions.incrementAndGet(), drawn.steps());
		int before = ledger.size();
		Map<String, Answer> firsts = new HashMap<>();
		List<Step> steps = scenario.steps();
		for (int i = 0; i < steps.size(); i++) {
			Step step = steps.get(i);
			if (step.kind() == Type.RELEASED && i + 1 < steps.size()) {
				// Runs when the next step's request arrives, inside that request.
				Step releaser = steps.get(i + 1);
				String gate = scenario.run() + "-" + i;
				CompletableFuture<Answer> released = CompletableFuture
					.supplyAsync(() -> send(scenario, step, gate, null));
				awaitWaitingOrDone(gate, released);
				// A releaser that is a released call itself finds its own gate open.
				String own = (releaser.kind() == Type.RELEASED) ? gate + "-open" : null;
				if (own != null) {
					open(own);
				}
				Answer releasing = send(scenario, releaser, own, gate);
				Answer answered = released.join();
				if (call(scenario, releaser).equals(call(scenario, step)) && releasing.status() == 409) {
					// The same call as the one it released, which may still run: in
					// progress.
					assertThat(releasing.body()).contains("urn:idempotent:in-progress");
					check(scenario, step, answered, firsts);
				}
				else {
					check(scenario, step, answered, firsts);
					check(scenario, releaser, releasing, firsts);
				}
				i++;
			}
			else {
				// A released call with no request after it: its gate is open before it
				// comes.
				String gate = scenario.run() + "-" + i;
				futureGates.computeIfAbsent(gate, (name) -> new CompletableFuture<>()).complete(true);
				sinkGates.computeIfAbsent(gate, (name) -> Sinks.one()).tryEmitValue(true);
				check(scenario, step, send(scenario, step, gate, null), firsts);
			}
		}
		Map<String, Long> ran = ledger.subList(before, ledger.size())
			.stream()
			.filter((entry) -> entry.startsWith(scenario.run()))
			.collect(Collectors.groupingBy(Function.identity(), Collectors.counting()));
		assertThat(ran).as("runs per stack, handler, caller and key").allSatisfy((call, count) -> {
			assertThat(count).as(call).isEqualTo(1);
			assertThat(firsts).as(call + " ran but no first answer saw it").containsKey(call);
		});
		assertThat(firsts.keySet()).as("first answers without a run").isEqualTo(ran.keySet());
	}

	/**
	 * What the model says a caller may get: its own first answer, a replay of it with the
	 * same body, or 422 with another; never anything that ran for someone else.
	 */
	private static String call(Scenario scenario, Step step) {
		return scenario.run() + "|" + step.stack() + "|" + step.type() + "|" + step.user() + "|" + step.key();
	}

	private static void check(Scenario scenario, Step step, Answer answer, Map<String, Answer> firsts) {
		String call = call(scenario, step);
		String where = call + " body " + BODIES.get(step.body()) + " -> " + answer;
		if (answer.status() == 200) {
			assertThat(answer.body()).as(where).contains("\"ranFor\":\"" + step.user() + "\"");
		}
		Answer first = firsts.get(call);
		if (first == null) {
			assertThat(answer.status()).as(where).isEqualTo(200);
			assertThat(answer.replayed()).as(where).isFalse();
			firsts.put(call, answer.withBody(step.body()));
		}
		else if (BODY_CLASS[first.bodyIndex()] == BODY_CLASS[step.body()]) {
			assertThat(answer.status()).as(where).isEqualTo(200);
			assertThat(answer.replayed()).as(where).isTrue();
			assertThat(answer.body()).as(where).isEqualTo(first.body());
		}
		else {
			assertThat(answer.status()).as(where).isEqualTo(422);
		}
	}

	private Answer send(Scenario scenario, Step step, @org.jspecify.annotations.Nullable String gate,
			@org.jspecify.annotations.Nullable String release) {
		int port = ((WebServerApplicationContext) ((step.on() == Stack.MVC) ? mvc : flux)).getWebServer().getPort();
		// The gate travels in a header: headers are not part of the fingerprint.
		HttpRequest.Builder request = HttpRequest
			.newBuilder(URI.create("http://127.0.0.1:" + port + "/p/" + step.type()))
			.timeout(Duration.ofSeconds(30))
			.header("Authorization",
					"Basic " + Base64.getEncoder()
						.encodeToString((step.user() + ":" + step.user()).getBytes(StandardCharsets.UTF_8)))
			.header("Content-Type", "application/json")
			.header("Idempotency-Key", scenario.run() + "-" + step.key())
			.header("X-Stack", scenario.run() + "|" + step.stack())
			.POST(HttpRequest.BodyPublishers.ofString(BODIES.get(step.body())));
		if (release != null) {
			request.header("X-Release", release);
		}
		if (gate != null) {
			request.header("X-Gate", gate);
		}
		try {
			HttpResponse<String> response = this.http.send(request.build(), HttpResponse.BodyHandlers.ofString());
			return new Answer(response.statusCode(), response.headers().firstValue("Idempotent-Replayed").isPresent(),
					response.body(), -1);
		}
		catch (IOException | InterruptedException ex) {
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * Opens a gate, whichever stack's call waits at it: from inside the request that
	 * carries it, on that request's thread.
	 */
	private static void open(String gate) {
		futureGates.computeIfAbsent(gate, (name) -> new CompletableFuture<>()).complete(true);
		sinkGates.computeIfAbsent(gate, (name) -> Sinks.one()).tryEmitValue(true);
	}

	private static void awaitWaitingOrDone(String gate, CompletableFuture<Answer> call) {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
		while (!call.isDone() && waiting.getOrDefault(gate, new AtomicInteger()).get() == 0) {
			assertThat(System.nanoTime()).as("the released call neither waits nor answers").isLessThan(deadline);
			try {
				Thread.sleep(5);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
		}
	}

	/**
	 * A guarded handler ran: one ledger entry per run, and the answer names its caller.
	 */
	static Map<String, Object> ran(String stack, String type, String user, String key, Map<String, ?> body) {
		String[] runAndStack = stack.split("\\|");
		String clientKey = key.substring(key.lastIndexOf('-') + 1);
		ledger.add(runAndStack[0] + "|" + runAndStack[1] + "|" + type + "|" + user + "|" + clientKey);
		return Map.of("ranFor", user, "type", type, "run", runs.incrementAndGet(), "amount",
				String.valueOf(body.get("amount")));
	}

	/**
	 * @param id keeps each try's keys apart from every other's: a number of its own each
	 * time a scenario is played
	 */
	record Scenario(long id, List<Step> steps) {

		String run() {
			return Long.toHexString(this.id);
		}

	}

	record Step(Stack on, Type kind, Caller caller, int keyNumber, int body) {

		String type() {
			return this.kind.name().toLowerCase(java.util.Locale.ROOT);
		}

		String stack() {
			return this.on.name().toLowerCase(java.util.Locale.ROOT);
		}

		String user() {
			return this.caller.name().toLowerCase(java.util.Locale.ROOT);
		}

		String key() {
			return "k" + this.keyNumber;
		}

	}

	enum Stack {

		MVC, FLUX

	}

	/**
	 * What the handler returns: each its own endpoint ({@code /p/value} ...).
	 */
	enum Type {

		VALUE, ENTITY, FUTURE, MONO, SUSPEND, RELEASED

	}

	enum Caller {

		ALICE, BOB

	}

	record Answer(int status, boolean replayed, String body, int bodyIndex) {

		Answer withBody(int index) {
			return new Answer(this.status, this.replayed, this.body, index);
		}

	}

	private static List<UserDetails> users() {
		List<UserDetails> users = new ArrayList<>();
		for (String name : List.of("alice", "bob")) {
			users.add(User.withUsername(name).password("{noop}" + name).roles("USER").build());
		}
		return users;
	}

	@SpringBootConfiguration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import({ Handlers.class, MvcReleased.class, SuspendPayments.class })
	static class MvcApp {

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
			return new InMemoryUserDetailsManager(CallerIdentityPropertyTests.users());
		}

		/**
		 * Releases another request's waiting call from inside this request.
		 */
		@Bean
		OncePerRequestFilter releasingFilter() {
			return new OncePerRequestFilter() {

				@Override
				protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response,
						FilterChain chain) throws ServletException, IOException {
					String release = request.getHeader("X-Release");
					if (release != null) {
						open(release);
					}
					chain.doFilter(request, response);
				}

			};
		}

	}

	@SpringBootConfiguration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import({ Handlers.class, FluxReleased.class, SuspendPayments.class })
	static class FluxApp implements WebFluxConfigurer {

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
			return new MapReactiveUserDetailsService(CallerIdentityPropertyTests.users());
		}

		/**
		 * Releases another request's waiting call from inside this request's signal.
		 */
		@Bean
		WebFilter releasingWebFilter() {
			return (exchange, chain) -> {
				String release = exchange.getRequest().getHeaders().getFirst("X-Release");
				if (release != null) {
					open(release);
				}
				return chain.filter(exchange);
			};
		}

		@Override
		public void configureArgumentResolvers(ArgumentResolverConfigurer configurer) {
			configurer.addCustomResolver(new HandlerMethodArgumentResolver() {

				@Override
				public boolean supportsParameter(MethodParameter parameter) {
					return parameter.getParameterType() == Gate.class;
				}

				@Override
				public Mono<Object> resolveArgument(MethodParameter parameter, BindingContext bindingContext,
						ServerWebExchange exchange) {
					String gate = exchange.getRequest().getHeaders().getFirst("X-Gate");
					Sinks.One<Boolean> sink = sinkGates.computeIfAbsent(gate, (name) -> Sinks.one());
					waiting.computeIfAbsent(gate, (name) -> new AtomicInteger()).incrementAndGet();
					return sink.asMono().map((opened) -> new Gate(gate));
				}

			});
		}

	}

	record Gate(String name) {
	}

	@RestController
	static class Handlers {

		@PostMapping("/p/value")
		@Idempotent
		Map<String, Object> value(Principal principal, @RequestHeader("X-Stack") String stack,
				@RequestHeader("Idempotency-Key") String key, @RequestBody Map<String, Object> body) {
			return ran(stack, "value", principal.getName(), key, body);
		}

		@PostMapping("/p/entity")
		@Idempotent
		ResponseEntity<Map<String, Object>> entity(Principal principal, @RequestHeader("X-Stack") String stack,
				@RequestHeader("Idempotency-Key") String key, @RequestBody Map<String, Object> body) {
			return ResponseEntity.ok()
				.header("X-Ran-For", principal.getName())
				.body(ran(stack, "entity", principal.getName(), key, body));
		}

		@PostMapping("/p/future")
		@Idempotent
		CompletableFuture<Map<String, Object>> future(Principal principal, @RequestHeader("X-Stack") String stack,
				@RequestHeader("Idempotency-Key") String key, @RequestBody Map<String, Object> body) {
			String user = principal.getName();
			return CompletableFuture.supplyAsync(() -> ran(stack, "future", user, key, body));
		}

		@PostMapping("/p/mono")
		@Idempotent
		Mono<Map<String, Object>> mono(Principal principal, @RequestHeader("X-Stack") String stack,
				@RequestHeader("Idempotency-Key") String key, @RequestBody Map<String, Object> body) {
			String user = principal.getName();
			return Mono.fromSupplier(() -> ran(stack, "mono", user, key, body));
		}

	}

	/**
	 * Spring MVC: a future completed by the next request, on that request's thread.
	 */
	@RestController
	static class MvcReleased {

		@PostMapping("/p/released")
		@Idempotent
		CompletableFuture<Map<String, Object>> released(Principal principal, @RequestHeader("X-Stack") String stack,
				@RequestHeader("Idempotency-Key") String key, @RequestHeader("X-Gate") String gate,
				@RequestBody Map<String, Object> body) {
			String user = principal.getName();
			CompletableFuture<Boolean> opened = futureGates.computeIfAbsent(gate, (name) -> new CompletableFuture<>());
			waiting.computeIfAbsent(gate, (name) -> new AtomicInteger()).incrementAndGet();
			return opened.thenApply((ignored) -> ran(stack, "released", user, key, body));
		}

	}

	/**
	 * WebFlux: a handler whose argument arrives with the next request's signal, so that
	 * it is called on that request's thread, inside it.
	 */
	@RestController
	static class FluxReleased {

		@PostMapping("/p/released")
		@Idempotent
		Map<String, Object> released(Principal principal, Gate gate, @RequestHeader("X-Stack") String stack,
				@RequestHeader("Idempotency-Key") String key, @RequestBody Map<String, Object> body) {
			return ran(stack, "released", principal.getName(), key, body);
		}

	}

}
