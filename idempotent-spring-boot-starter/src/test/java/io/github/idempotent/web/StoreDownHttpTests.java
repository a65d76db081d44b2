package io.github.idempotent.web;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.UUID;
import java.util.function.ToIntFunction;

import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

import io.github.idempotent.testsupport.TestRedis.EmbeddedRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a client sees when Redis dies under a fail-closed store: 503 with Retry-After, and
 * the payment was not made. The same on Spring MVC, for a synchronous endpoint and for a
 * {@code CompletableFuture} one, whose claim fails asynchronously, and on WebFlux.
 * <p>
 * Each variant kills its Redis: it starts its application on a Redis started for it, and
 * stops both.
 */
@ExtendWith(OutputCaptureExtension.class)
class StoreDownHttpTests {

	/**
	 * An application and its endpoint, which counts its executions under its own name.
	 */
	enum Endpoint {

		MVC(WebTestApplication.class, "servlet", "payments",
				(app) -> app.getBean(WebTestApplication.Executions.class).count("payments")),

		MVC_FUTURE(WebTestApplication.class, "servlet", "future-payments",
				(app) -> app.getBean(WebTestApplication.Executions.class).count("future-payments")),

		WEBFLUX(WebFluxTestApplication.class, "reactive", "payments",
				(app) -> app.getBean(WebFluxTestApplication.Executions.class).count("payments"));

		private final Class<?> application;

		private final String type;

		private final String path;

		private final ToIntFunction<ConfigurableApplicationContext> executions;

		Endpoint(Class<?> application, String type, String path,
				ToIntFunction<ConfigurableApplicationContext> executions) {
			this.application = application;
			this.type = type;
			this.path = path;
			this.executions = executions;
		}

	}

	@ParameterizedTest
	@EnumSource
	void storeDownIsServiceUnavailableAndTheMethodDoesNotRun(Endpoint endpoint, CapturedOutput output)
			throws Exception {
		EmbeddedRedis redis = EmbeddedRedis.start();
		try {
			ConfigurableApplicationContext app = new SpringApplicationBuilder(endpoint.application)
				.properties("spring.main.web-application-type=" + endpoint.type, "server.port=0",
						"server.address=127.0.0.1", "spring.main.banner-mode=off", "idempotent.store.type=redis",
						"spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + redis.port(),
						"spring.data.redis.timeout=500ms", "spring.data.redis.connect-timeout=500ms",
						"idempotent.retry-after=3s")
				.run();
			try {
				URI uri = URI.create("http://127.0.0.1:" + ((WebServerApplicationContext) app).getWebServer().getPort()
						+ "/" + endpoint.path);
				HttpClient http = HttpClient.newHttpClient();
				HttpResponse<String> before = http.send(request(uri), HttpResponse.BodyHandlers.ofString());
				assertThat(before.statusCode()).isEqualTo(201);
				int executionsBefore = endpoint.executions.applyAsInt(app);
				assertThat(executionsBefore).isPositive();

				redis.stop();

				HttpResponse<String> during = http.send(request(uri), HttpResponse.BodyHandlers.ofString());
				assertThat(during.statusCode()).isEqualTo(503);
				assertThat(during.headers().firstValue("Retry-After")).hasValue("3");
				assertThat(during.headers().firstValue("Content-Type")).hasValue("application/problem+json");
				assertThat(during.body()).contains("retry later with the same key").doesNotContain("127.0.0.1");
				assertThat(endpoint.executions.applyAsInt(app)).isEqualTo(executionsBefore);
				// The operator learns of the outage from the log, not only the client.
				assertThat(output).contains("Idempotency store unavailable: refused 1 call");
			}
			finally {
				SpringApplication.exit(app);
			}
		}
		finally {
			redis.stop();
		}
	}

	private static HttpRequest request(URI uri) {
		return HttpRequest.newBuilder(uri)
			.header("Content-Type", "application/json")
			.header("Idempotency-Key", UUID.randomUUID().toString())
			.POST(HttpRequest.BodyPublishers.ofString("{\"orderNo\":\"X-1\",\"amount\":5}"))
			.build();
	}

}
