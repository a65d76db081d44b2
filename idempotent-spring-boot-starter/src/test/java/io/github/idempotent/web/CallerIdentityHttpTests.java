package io.github.idempotent.web;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import jakarta.servlet.http.HttpServletResponse;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.task.TaskDecorator;
import org.springframework.scheduling.annotation.Async;
import org.springframework.scheduling.annotation.EnableAsync;
import org.springframework.scheduling.concurrent.ThreadPoolTaskExecutor;
import org.springframework.security.authentication.UsernamePasswordAuthenticationToken;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.authority.AuthorityUtils;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Who is calling travels with the call on Spring MVC, and the key header means one thing:
 * users alice and bob over HTTP Basic against a real Redis.
 */
@SpringBootTest(classes = CallerIdentityHttpTests.App.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "idempotent.store.type=redis", "idempotent.key-prefix=identity-mvc" })
class CallerIdentityHttpTests {

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", TestRedis::host);
		registry.add("spring.data.redis.port", TestRedis::port);
	}

	/** Every run of a guarded method, as "method:user": kept outside the store. */
	static final List<String> ledger = new CopyOnWriteArrayList<>();

	@LocalServerPort
	private int port;

	private final HttpClient http = HttpClient.newHttpClient();

	@BeforeEach
	void clear() {
		ledger.clear();
	}

	/**
	 * An {@code @Async} service on an executor whose decorator copies the request
	 * attributes but not the security context: the caller is unknown there, so the call
	 * fails rather than share one scope with every other caller.
	 */
	@Test
	void anAsyncServiceWithoutTheCallersSecurityContextNeverSharesAScope() throws Exception {
		String order = UUID.randomUUID().toString();
		String body = "{\"orderNo\":\"" + order + "\",\"amount\":10}";
		HttpResponse<String> alice = post("/async/pay", "alice", "K-" + order, body);
		HttpResponse<String> bob = post("/async/pay", "bob", "K-" + order, body);
		assertThat(bob.body()).doesNotContain("\"ranFor\":\"alice\"");
		assertThat(bob.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(alice.statusCode()).isEqualTo(500);
		assertThat(alice.body()).contains("urn:idempotent:scope-unknown").doesNotContain("Exception");
		assertThat(ledger).isEmpty();
	}

	/**
	 * A {@code Mono} service method takes its caller from the thread that calls it, never
	 * from the one that subscribes: here a pool thread whose
	 * {@code SecurityContextHolder} still holds bob (as one left behind by another
	 * request, or inherited with {@code MODE_INHERITABLETHREADLOCAL}).
	 */
	@Test
	void aMonoSubscribedOnAThreadHoldingAnotherUserIsNeverScopedToThatUser() throws Exception {
		String key = UUID.randomUUID().toString();
		HttpResponse<String> bob = post("/mono/pay", "bob", key, "{\"amount\":10}");
		HttpResponse<String> alice = post("/mono/pay", "alice", key, "{\"amount\":10}");
		assertThat(bob.body()).contains("\"ranFor\":\"bob\"");
		assertThat(alice.body()).as(alice.statusCode() + " " + alice.body()).doesNotContain("\"ranFor\":\"bob\"");
		assertThat(alice.statusCode()).isEqualTo(200);
		assertThat(alice.body()).contains("\"ranFor\":\"alice\"");
		// Each caller still gets their own record back.
		assertThat(post("/mono/pay", "alice", key, "{\"amount\":10}").body()).contains("\"ranFor\":\"alice\"");
		assertThat(post("/mono/pay", "bob", key, "{\"amount\":10}").body()).contains("\"ranFor\":\"bob\"");
		assertThat(ledger).containsExactly("mono:bob", "mono:alice");
	}

	@Test
	void aKeyTheFirewallRejectsIsTheStartersOwnProblem() throws Exception {
		String response = rawPost("/pay", "alice", "ключ-".getBytes(StandardCharsets.UTF_8), "{\"amount\":1}");
		assertThat(response).startsWith("HTTP/1.1 400");
		assertThat(response).contains("urn:idempotent:invalid-key");
		assertThat(ledger).isEmpty();
	}

	@Test
	void aHeaderListOfKeysIsRefused() throws Exception {
		HttpResponse<String> folded = post("/pay", "alice", "k1-" + UUID.randomUUID() + ", k2", "{\"amount\":1}");
		assertThat(folded.statusCode()).isEqualTo(400);
		assertThat(folded.body()).contains("urn:idempotent:invalid-key");
		String twoHeaders = rawPost("/pay", "alice",
				("k1-" + UUID.randomUUID() + "\r\nIdempotency-Key: k2").getBytes(StandardCharsets.US_ASCII),
				"{\"amount\":1}");
		assertThat(twoHeaders).startsWith("HTTP/1.1 400").contains("urn:idempotent:invalid-key");
		assertThat(ledger).isEmpty();
	}

	/**
	 * A handler that writes a stream of events to the response itself: a retry never gets
	 * an empty success in its place.
	 */
	@Test
	void aHandlerThatStreamsItsOwnResponseIsNeverReplayedAsAnEmptySuccess() throws Exception {
		String key = UUID.randomUUID().toString();
		HttpResponse<String> first = post("/events", "alice", key, "{}");
		assertThat(first.body()).contains("data: event-5");
		// Out before the handler returned: not echoed.
		assertThat(first.headers().firstValue("Idempotency-Key")).isEmpty();
		HttpResponse<String> retry = post("/events", "alice", key, "{}");
		boolean sameStream = retry.statusCode() == 200 && retry.body().equals(first.body());
		boolean refused = retry.statusCode() >= 400 && retry.body().contains("urn:idempotent:");
		assertThat(sameStream || refused).as(retry.statusCode() + " " + retry.headers().map() + " " + retry.body())
			.isTrue();
	}

	@Test
	void numericallyEqualAmountsAreTheSamePayload() throws Exception {
		String key = UUID.randomUUID().toString();
		HttpResponse<String> first = post("/pay", "alice", key, "{\"amount\": 12.50, \"currency\":\"EUR\"}");
		HttpResponse<String> second = post("/pay", "alice", key, "{\"currency\":\"EUR\",\"amount\":12.5}");
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(second.statusCode()).isEqualTo(200);
		assertThat(second.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		String other = UUID.randomUUID().toString();
		post("/pay", "alice", other, "{\"amount\":10}");
		assertThat(post("/pay", "alice", other, "{\"amount\":10.0}").statusCode()).isEqualTo(200);
		assertThat(post("/pay", "alice", other, "{\"amount\":1e1}").statusCode()).isEqualTo(200);
		assertThat(post("/pay", "alice", other, "{\"amount\":10.01}").statusCode()).isEqualTo(422);
		assertThat(ledger).containsExactly("pay:alice", "pay:alice");
	}

	private HttpResponse<String> post(String path, String user, String key, String body) throws Exception {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
			.timeout(Duration.ofSeconds(20))
			.header("Authorization", basic(user))
			.header("Content-Type", "application/json")
			.header("Idempotency-Key", key)
			.POST(HttpRequest.BodyPublishers.ofString(body))
			.build();
		return this.http.send(request, HttpResponse.BodyHandlers.ofString());
	}

	/**
	 * A POST written byte by byte, for header values an HTTP client refuses to send.
	 */
	private String rawPost(String path, String user, byte[] key, String body) throws IOException {
		try (Socket socket = new Socket("127.0.0.1", this.port)) {
			socket.setSoTimeout(20_000);
			OutputStream out = socket.getOutputStream();
			byte[] content = body.getBytes(StandardCharsets.UTF_8);
			out.write(("POST " + path + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nAuthorization: "
					+ basic(user) + "\r\nContent-Type: application/json\r\nContent-Length: " + content.length
					+ "\r\nIdempotency-Key: ")
				.getBytes(StandardCharsets.US_ASCII));
			out.write(key);
			out.write("\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
			out.write(content);
			out.flush();
			InputStream in = socket.getInputStream();
			ByteArrayOutputStream response = new ByteArrayOutputStream();
			in.transferTo(response);
			return response.toString(StandardCharsets.UTF_8);
		}
	}

	private static String basic(String user) {
		return "Basic " + Base64.getEncoder().encodeToString((user + ":" + user).getBytes(StandardCharsets.UTF_8));
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@EnableAsync
	@Import({ Controllers.class, PaymentService.class })
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

		/**
		 * The common decorator for request-scoped beans: the request attributes travel to
		 * the executor's threads, the security context does not.
		 */
		@Bean
		ThreadPoolTaskExecutor taskExecutor() {
			ThreadPoolTaskExecutor executor = new ThreadPoolTaskExecutor();
			executor.setCorePoolSize(2);
			executor.setTaskDecorator(requestAttributesDecorator());
			return executor;
		}

		private static TaskDecorator requestAttributesDecorator() {
			return (task) -> {
				RequestAttributes attributes = RequestContextHolder.getRequestAttributes();
				return () -> {
					RequestContextHolder.setRequestAttributes(attributes);
					try {
						task.run();
					}
					finally {
						RequestContextHolder.resetRequestAttributes();
					}
				};
			};
		}

	}

	static class PaymentService {

		@Async
		@Idempotent(key = "#request['orderNo']", payload = "#request")
		public CompletableFuture<Map<String, Object>> pay(Map<String, Object> request, String user) {
			ledger.add("async:" + user);
			return CompletableFuture.completedFuture(Map.of("ranFor", user, "orderNo", request.get("orderNo")));
		}

		@Idempotent(key = "#key", payload = "#request")
		public Mono<Map<String, Object>> payMono(String key, Map<String, Object> request, String user) {
			return Mono.fromSupplier(() -> {
				ledger.add("mono:" + user);
				return Map.of("ranFor", user, "amount", String.valueOf(request.get("amount")));
			});
		}

	}

	@RestController
	static class Controllers implements DisposableBean {

		private final ExecutorService bobsThread = Executors.newSingleThreadExecutor();

		/** A thread that other work runs on, its security context bob's. */
		private final Scheduler bobs = Schedulers.fromExecutor((task) -> this.bobsThread.execute(() -> {
			SecurityContextHolder.getContext()
				.setAuthentication(UsernamePasswordAuthenticationToken.authenticated("bob", "n/a",
						AuthorityUtils.createAuthorityList("ROLE_USER")));
			task.run();
		}));

		private final PaymentService payments;

		Controllers(PaymentService payments) {
			this.payments = payments;
		}

		@PostMapping("/async/pay")
		CompletableFuture<Map<String, Object>> asyncPay(@RequestBody Map<String, Object> request,
				java.security.Principal principal) {
			return this.payments.pay(request, principal.getName());
		}

		@PostMapping("/mono/pay")
		Mono<Map<String, Object>> monoPay(@RequestHeader("Idempotency-Key") String key,
				@RequestBody Map<String, Object> request, java.security.Principal principal) {
			return this.payments.payMono(key, request, principal.getName()).subscribeOn(this.bobs);
		}

		@Override
		public void destroy() {
			this.bobsThread.shutdownNow();
		}

		@PostMapping("/pay")
		@Idempotent
		Map<String, Object> pay(@RequestBody Map<String, Object> request, java.security.Principal principal) {
			ledger.add("pay:" + principal.getName());
			return Map.of("ranFor", principal.getName(), "amount", String.valueOf(request.get("amount")));
		}

		@PostMapping("/events")
		@Idempotent
		void events(HttpServletResponse response) throws IOException {
			response.setContentType("text/event-stream");
			for (int i = 1; i <= 5; i++) {
				response.getWriter().write("data: event-" + i + "\n\n");
				response.getWriter().flush();
			}
		}

	}

}
