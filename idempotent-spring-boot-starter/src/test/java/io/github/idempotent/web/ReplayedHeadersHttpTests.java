package io.github.idempotent.web;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.UUID;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.servlet.HandlerInterceptor;
import org.springframework.web.servlet.ModelAndView;
import org.springframework.web.servlet.config.annotation.InterceptorRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

import io.github.idempotent.testsupport.TestRedis;
import io.github.idempotent.web.WebTestApplication.Executions;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a replay hands to whoever sends the key again: never the first caller's
 * credentials, never a key the client did not send as a header, and the same outcome as
 * the first call.
 */
@SpringBootTest(classes = WebTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "idempotent.store.type=redis", "idempotent.web.excluded-response-headers=X-Session-Token" })
@Import(ReplayedHeadersHttpTests.RequestIds.class)
class ReplayedHeadersHttpTests {

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", TestRedis::host);
		registry.add("spring.data.redis.port", TestRedis::port);
	}

	@LocalServerPort
	private int port;

	private HttpClientSupport http() {
		return new HttpClientSupport(this.port);
	}

	@Autowired
	private Executions executions;

	@BeforeEach
	void reset() {
		this.executions.reset();
	}

	@Test
	void credentialsAndExcludedHeadersAreNotReplayed() throws Exception {
		String key = UUID.randomUUID().toString();
		String body = "{\"orderNo\":\"S-1\",\"amount\":1}";
		HttpResponse<String> first = http().post("/logins", key, body);
		HttpResponse<String> replay = http().post("/logins", key, body);
		assertThat(first.headers().firstValue("Set-Cookie")).hasValueSatisfying((c) -> c.startsWith("SESSION="));
		assertThat(replay.statusCode()).isEqualTo(201);
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(replay.body()).isEqualTo(first.body());
		assertThat(replay.headers().firstValue("X-Payment-Id")).isEqualTo(first.headers().firstValue("X-Payment-Id"));
		assertThat(replay.headers().allValues("Set-Cookie")).isEmpty();
		assertThat(replay.headers().allValues("WWW-Authenticate")).isEmpty();
		assertThat(replay.headers().allValues("X-Session-Token")).isEmpty();
		// A handler's own credential headers: the first caller's token, never a
		// retrier's.
		for (String credential : List.of("X-Auth-Token", "X-API-Key", "X-CSRF-TOKEN")) {
			assertThat(first.headers().firstValue(credential)).isPresent();
			assertThat(replay.headers().allValues(credential)).as(credential).isEmpty();
		}
		assertThat(this.executions.count("logins")).isEqualTo(1);
	}

	@Test
	void aHeaderSetAfterTheHandlerForEveryRequestCarriesTheReplayRequestsOwnValue() throws Exception {
		String key = UUID.randomUUID().toString();
		String body = "{\"orderNo\":\"S-4\",\"amount\":1}";
		HttpResponse<String> first = http().post("/payments", key, body);
		HttpResponse<String> replay = http().post("/payments", key, body);
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(first.headers().firstValue("X-Request-Id")).isPresent();
		assertThat(replay.headers().firstValue("X-Request-Id")).isPresent()
			.isNotEqualTo(first.headers().firstValue("X-Request-Id"));
		// The interceptor saw the key echo and the replay marker.
		assertThat(first.headers().firstValue("X-Seen-Marks")).hasValue(key + "/null");
		assertThat(replay.headers().firstValue("X-Seen-Marks")).hasValue(key + "/true");
		assertThat(replay.headers().firstValue("X-Payment-Id")).isEqualTo(first.headers().firstValue("X-Payment-Id"));
		assertThat(this.executions.count("payments")).isEqualTo(1);
	}

	@Test
	void aReplayOfAnInnerCallDoesNotMarkAFirstCallAsReplayed() throws Exception {
		String orderNo = "N-" + UUID.randomUUID();
		String body = "{\"orderNo\":\"" + orderNo + "\",\"amount\":1}";
		http().post("/ledgered-payments", UUID.randomUUID().toString(), body);
		// A new key: the payment runs again, and its ledger call (keyed by order)
		// replays.
		HttpResponse<String> second = http().post("/ledgered-payments", UUID.randomUUID().toString(), body);
		assertThat(second.statusCode()).isEqualTo(200);
		assertThat(second.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(this.executions.count("ledgered")).isEqualTo(2);
		assertThat(this.executions.count("ledger")).isEqualTo(1);
		String key = UUID.randomUUID().toString();
		http().post("/ledgered-payments", key, body);
		HttpResponse<String> replay = http().post("/ledgered-payments", key, body);
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
	}

	@Test
	void aKeyTakenFromTheBodyIsNotEchoedAsAHeader() throws Exception {
		HttpResponse<String> response = http().post("/keyed-payments", null,
				"{\"orderNo\":\"secret-order-" + UUID.randomUUID() + "\",\"amount\":1}");
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(response.headers().firstValue("Idempotency-Key")).isEmpty();
	}

	@Test
	void aCachedErrorThatCannotBeRecreatedIsNotReplayedAsAnotherOutcome() throws Exception {
		String key = UUID.randomUUID().toString();
		String body = "{\"orderNo\":\"D-1\",\"amount\":1}";
		HttpResponse<String> first = http().post("/declined-with-status", key, body);
		HttpResponse<String> retry = http().post("/declined-with-status", key, body);
		assertThat(first.statusCode()).isEqualTo(402);
		assertThat(retry.statusCode()).isEqualTo(402);
		assertThat(retry.body()).doesNotContain("ResponseStatusException").doesNotContain("org.springframework");
	}

	// A request id set after every handler, as docs/http.md describes.
	static class RequestIds implements WebMvcConfigurer {

		@Override
		public void addInterceptors(InterceptorRegistry registry) {
			registry.addInterceptor(new HandlerInterceptor() {

				@Override
				public void postHandle(HttpServletRequest request, HttpServletResponse response, Object handler,
						@Nullable ModelAndView modelAndView) {
					response.setHeader("X-Request-Id", UUID.randomUUID().toString());
					// What an interceptor after the handler sees of the key echo and the
					// replay marker.
					response.setHeader("X-Seen-Marks",
							response.getHeader("Idempotency-Key") + "/" + response.getHeader("Idempotent-Replayed"));
				}

			});
		}

	}

}
