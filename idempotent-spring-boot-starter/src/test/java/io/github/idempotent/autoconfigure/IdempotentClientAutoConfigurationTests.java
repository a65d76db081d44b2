package io.github.idempotent.autoconfigure;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.restclient.RestClientCustomizer;
import org.springframework.boot.restclient.autoconfigure.RestClientAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.web.client.RestClient;

import io.github.idempotent.client.IdempotentRetryInterceptor;

import static org.assertj.core.api.Assertions.assertThat;

class IdempotentClientAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(
			AutoConfigurations.of(RestClientAutoConfiguration.class, IdempotentClientAutoConfiguration.class));

	@Test
	void offByDefault() {
		this.runner.run((context) -> {
			assertThat(context).doesNotHaveBean(IdempotentRetryInterceptor.class);
			assertThat(interceptors(context.getBean(RestClient.Builder.class))).isEmpty();
		});
	}

	@Test
	void enabledAddsTheInterceptorToBootsRestClientBuilder() {
		this.runner
			.withPropertyValues("idempotent.client.enabled=true", "idempotent.client.max-retries=5",
					"idempotent.client.delay=50ms")
			.run((context) -> {
				IdempotentRetryInterceptor interceptor = context.getBean(IdempotentRetryInterceptor.class);
				assertThat(interceptors(context.getBean(RestClient.Builder.class))).containsExactly(interceptor);
			});
	}

	@Test
	void backsOffForTheApplicationsOwnInterceptor() {
		IdempotentRetryInterceptor own = IdempotentRetryInterceptor.builder().maxRetries(0).build();
		this.runner.withPropertyValues("idempotent.client.enabled=true")
			.withBean(IdempotentRetryInterceptor.class, () -> own)
			.run((context) -> assertThat(interceptors(context.getBean(RestClient.Builder.class))).containsExactly(own));
	}

	@Test
	void notAppliedWithoutBootsRestClientSupport() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(IdempotentClientAutoConfiguration.class))
			.withPropertyValues("idempotent.client.enabled=true")
			.withClassLoader(new FilteredClassLoader(RestClientCustomizer.class))
			.run((context) -> assertThat(context).doesNotHaveBean(IdempotentRetryInterceptor.class));
	}

	private static List<ClientHttpRequestInterceptor> interceptors(RestClient.Builder builder) {
		List<ClientHttpRequestInterceptor> interceptors = new ArrayList<>();
		builder.requestInterceptors(interceptors::addAll);
		return interceptors;
	}

}
