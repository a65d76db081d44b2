package io.github.idempotent.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.restclient.RestClientCustomizer;
import org.springframework.boot.restclient.autoconfigure.RestClientAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.web.client.RestClient;

import io.github.idempotent.client.IdempotentRetryInterceptor;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The client interceptor is opt-in per {@code RestClient}: the auto-configuration
 * provides it as a bean, and only clients built with it send keys and retry. A server
 * that answers 503 once tells the two apart over real HTTP.
 */
class IdempotentClientAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(
			AutoConfigurations.of(RestClientAutoConfiguration.class, IdempotentClientAutoConfiguration.class));

	private HttpServer server;

	private final AtomicInteger unavailableAnswers = new AtomicInteger();

	private final List<String> keys = new CopyOnWriteArrayList<>();

	@BeforeEach
	void startServer() throws IOException {
		this.server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
		this.server.createContext("/", this::handle);
		this.server.start();
	}

	@AfterEach
	void stopServer() {
		this.server.stop(0);
	}

	private void handle(HttpExchange exchange) throws IOException {
		try (InputStream in = exchange.getRequestBody()) {
			in.readAllBytes();
		}
		this.keys.add(String.valueOf(exchange.getRequestHeaders().getFirst("Idempotency-Key")));
		int status = (this.unavailableAnswers.getAndDecrement() > 0) ? 503 : 200;
		byte[] body = "{}".getBytes(StandardCharsets.UTF_8);
		exchange.getResponseHeaders().set("Content-Type", "application/json");
		if (status == 503) {
			exchange.getResponseHeaders().set("Retry-After", "0");
		}
		exchange.sendResponseHeaders(status, body.length);
		exchange.getResponseBody().write(body);
		exchange.close();
	}

	private String baseUrl() {
		return "http://127.0.0.1:" + this.server.getAddress().getPort();
	}

	private static HttpStatus post(RestClient client) {
		ResponseEntity<Void> response = client.post()
			.uri("/payments")
			.body("{}")
			.retrieve()
			.onStatus((status) -> true, (request, resp) -> {
			})
			.toBodilessEntity();
		return HttpStatus.valueOf(response.getStatusCode().value());
	}

	@Test
	void plainRestClientBuilderGetsNoInterceptor() {
		this.runner.run((context) -> {
			assertThat(context).hasSingleBean(IdempotentRetryInterceptor.class);
			assertThat(interceptors(context.getBean(RestClient.Builder.class))).isEmpty();
		});
	}

	@Test
	void thirdPartyClientIsLeftAloneWhileAnOptedInClientSendsKeysAndRetries() {
		// idempotent.client.enabled=true is what the documentation used to tell users to
		// set: it must not reach clients that did not ask for the interceptor.
		this.runner.withPropertyValues("idempotent.client.enabled=true", "idempotent.client.delay=0ms")
			.withPropertyValues("test.base-url=" + baseUrl())
			.withUserConfiguration(ClientsConfiguration.class)
			.run((context) -> {
				this.unavailableAnswers.set(1);
				assertThat(post(context.getBean("thirdParty", RestClient.class)))
					.isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);
				assertThat(this.keys).containsExactly("null");

				this.keys.clear();
				this.unavailableAnswers.set(1);
				assertThat(post(context.getBean("payments", RestClient.class))).isEqualTo(HttpStatus.OK);
				assertThat(this.keys).hasSize(2).doesNotContain("null").containsOnly(this.keys.get(0));
			});
	}

	@Test
	void optedInClientUsesTheConfiguredInterceptor() {
		this.runner.withPropertyValues("idempotent.client.max-retries=5", "idempotent.client.delay=0ms")
			.withPropertyValues("test.base-url=" + baseUrl())
			.withUserConfiguration(ClientsConfiguration.class)
			.run((context) -> {
				this.unavailableAnswers.set(5);
				assertThat(post(context.getBean("payments", RestClient.class))).isEqualTo(HttpStatus.OK);
				assertThat(this.keys).hasSize(6).containsOnly(this.keys.get(0));
			});
	}

	@Test
	void applyToAllRestClientsAddsTheInterceptorToBootsRestClientBuilder() {
		this.runner.withPropertyValues("idempotent.client.apply-to-all-rest-clients=true").run((context) -> {
			IdempotentRetryInterceptor interceptor = context.getBean(IdempotentRetryInterceptor.class);
			assertThat(interceptors(context.getBean(RestClient.Builder.class))).containsExactly(interceptor);
		});
	}

	@Test
	void disabledProvidesNoInterceptor() {
		this.runner
			.withPropertyValues("idempotent.client.enabled=false", "idempotent.client.apply-to-all-rest-clients=true")
			.run((context) -> {
				assertThat(context).doesNotHaveBean(IdempotentRetryInterceptor.class);
				assertThat(interceptors(context.getBean(RestClient.Builder.class))).isEmpty();
			});
	}

	@Test
	void backsOffForTheApplicationsOwnInterceptor() {
		IdempotentRetryInterceptor own = IdempotentRetryInterceptor.builder().maxRetries(0).build();
		this.runner.withPropertyValues("idempotent.client.apply-to-all-rest-clients=true")
			.withBean(IdempotentRetryInterceptor.class, () -> own)
			.run((context) -> {
				assertThat(context).getBean(IdempotentRetryInterceptor.class).isSameAs(own);
				assertThat(interceptors(context.getBean(RestClient.Builder.class))).containsExactly(own);
			});
	}

	@Test
	void notAppliedWithoutBootsRestClientSupport() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(IdempotentClientAutoConfiguration.class))
			.withClassLoader(new FilteredClassLoader(RestClientCustomizer.class))
			.run((context) -> assertThat(context).doesNotHaveBean(IdempotentRetryInterceptor.class));
	}

	private static List<ClientHttpRequestInterceptor> interceptors(RestClient.Builder builder) {
		List<ClientHttpRequestInterceptor> interceptors = new ArrayList<>();
		builder.requestInterceptors(interceptors::addAll);
		return interceptors;
	}

	/**
	 * Two clients from Boot's builder, as an application has them: one of its own API
	 * that opts in, and one of a third party that does not.
	 */
	@Configuration(proxyBeanMethods = false)
	static class ClientsConfiguration {

		@Bean
		RestClient payments(RestClient.Builder builder, IdempotentRetryInterceptor idempotentRetry,
				Environment environment) {
			return builder.requestFactory(new JdkClientHttpRequestFactory())
				.baseUrl(environment.getRequiredProperty("test.base-url"))
				.requestInterceptor(idempotentRetry)
				.build();
		}

		@Bean
		RestClient thirdParty(RestClient.Builder builder, Environment environment) {
			return builder.requestFactory(new JdkClientHttpRequestFactory())
				.baseUrl(environment.getRequiredProperty("test.base-url"))
				.build();
		}

	}

}
