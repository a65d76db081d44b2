package io.github.idempotent.web;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.servlet.http.HttpServletResponse;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

import io.github.idempotent.annotation.Idempotent;

import io.github.idempotent.testsupport.AbstractFinalOutcomeTests;
import io.github.idempotent.testsupport.FinalOutcomesController;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Final and released outcomes on Spring MVC with the Redis store, its local cache off.
 */
@SpringBootTest(
		classes = { WebTestApplication.class, FinalOutcomesController.class,
				RedisFinalOutcomeHttpTests.SendErrorController.class },
		webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "idempotent.store.type=redis", "idempotent.local-cache.enabled=false" })
class RedisFinalOutcomeHttpTests extends AbstractFinalOutcomeTests {

	private static final String PREFIX = "outcomes-mvc-" + UUID.randomUUID();

	@Autowired
	private RedisConnectionFactory connectionFactory;

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		useRedis(registry, PREFIX);
	}

	@Autowired
	private SendErrorController sendError;

	@LocalServerPort
	private int port;

	@Override
	protected long records(String clientKey) {
		return redisRecords(this.connectionFactory, PREFIX, clientKey);
	}

	/**
	 * A 503 sent through the servlet container ({@code sendError}) is not final either:
	 * not recordable as written, it still releases its key rather than leave a record
	 * that the call completed.
	 */
	@Test
	void a503SentAsAnErrorReleasesItsKey() throws Exception {
		String key = UUID.randomUUID().toString();
		HttpClient http = HttpClient.newHttpClient();
		HttpRequest request = HttpRequest
			.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/outcomes/send-error-once"))
			.timeout(Duration.ofSeconds(20))
			.header("Idempotency-Key", key)
			.POST(HttpRequest.BodyPublishers.noBody())
			.build();
		assertThat(http.send(request, HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(503);
		assertThat(records(key)).isZero();
		HttpResponse<String> retry = http.send(request, HttpResponse.BodyHandlers.ofString());
		assertThat(retry.statusCode()).isEqualTo(200);
		assertThat(retry.body()).isEqualTo("paid");
		assertThat(this.sendError.runs.get(key)).hasValue(2);
	}

	@RestController
	static class SendErrorController {

		final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

		@PostMapping("/outcomes/send-error-once")
		@Idempotent
		void sendErrorOnce(@RequestHeader("Idempotency-Key") String key, HttpServletResponse response)
				throws IOException {
			if (this.runs.computeIfAbsent(key, (k) -> new AtomicInteger()).incrementAndGet() == 1) {
				response.sendError(503);
				return;
			}
			response.getWriter().write("paid");
		}

	}

}
