package io.github.idempotent.core;

import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.autoconfigure.IdempotentAutoConfiguration;
import io.github.idempotent.testsupport.TestRedis.EmbeddedRedis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * What happens when Redis dies: fail closed refuses without running the method, fail open
 * runs it and reports the bypass.
 */
class StoreFailureModeTests {

	private ApplicationContextRunner runner(EmbeddedRedis redis) {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class, DataRedisAutoConfiguration.class,
					IdempotentAutoConfiguration.class, IdempotentAnnotationAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + redis.port(),
					"spring.data.redis.timeout=500ms", "spring.data.redis.connect-timeout=500ms",
					"idempotent.default-scope=global")
			.withUserConfiguration(ServiceConfiguration.class);
	}

	@Test
	void failClosedRefusesWithoutRunningTheMethod() {
		try (EmbeddedRedis redis = EmbeddedRedis.start()) {
			runner(redis).run((context) -> {
				Service service = context.getBean(Service.class);
				assertThat(service.charge(UUID.randomUUID().toString())).isEqualTo(1);
				redis.stop();
				assertThatExceptionOfType(IdempotencyStoreUnavailableException.class)
					.isThrownBy(() -> service.charge(UUID.randomUUID().toString()))
					.withMessageContaining("was not run");
				assertThat(service.count()).isEqualTo(1);
			});
		}
	}

	@Test
	void failOpenRunsTheMethodAndReportsTheBypass() {
		try (EmbeddedRedis redis = EmbeddedRedis.start()) {
			runner(redis).withPropertyValues("idempotent.failure-mode=open").run((context) -> {
				Service service = context.getBean(Service.class);
				CountingObserver observer = context.getBean(CountingObserver.class);
				redis.stop();
				String key = UUID.randomUUID().toString();
				assertThat(service.charge(key)).isEqualTo(1);
				assertThat(service.charge(key)).isEqualTo(2);
				assertThat(observer.bypassed.get()).isEqualTo(2);
				assertThat(context.getBean(MeterRegistry.class)
					.get("idempotent.calls")
					.tag("outcome", "bypassed")
					.counter()
					.count()).isEqualTo(2);
			});
		}
	}

	@Test
	void aFullStoreIsRefusedFailingOpenAndCountedAsStoreFull() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class, IdempotentAutoConfiguration.class,
					IdempotentAnnotationAutoConfiguration.class))
			.withPropertyValues("idempotent.store.type=memory", "idempotent.store.memory.maximum-records=1",
					"idempotent.failure-mode=open", "idempotent.default-scope=global")
			.withUserConfiguration(ServiceConfiguration.class)
			.run((context) -> {
				Service service = context.getBean(Service.class);
				assertThat(service.charge(UUID.randomUUID().toString())).isEqualTo(1);
				String key = UUID.randomUUID().toString();
				for (int i = 0; i < 2; i++) {
					assertThatExceptionOfType(IdempotencyStoreFullException.class)
						.isThrownBy(() -> service.charge(key));
				}
				assertThat(service.count()).isEqualTo(1);
				assertThat(context.getBean(CountingObserver.class).bypassed.get()).isZero();
				assertThat(context.getBean(MeterRegistry.class)
					.get("idempotent.calls")
					.tag("outcome", "store_full")
					.counter()
					.count()).isEqualTo(2);
			});
	}

	@Configuration(proxyBeanMethods = false)
	static class ServiceConfiguration {

		@Bean
		Service service() {
			return new Service();
		}

		@Bean
		SimpleMeterRegistry meterRegistry() {
			return new SimpleMeterRegistry();
		}

		@Bean
		CountingObserver countingObserver() {
			return new CountingObserver();
		}

	}

	static class CountingObserver implements IdempotencyObserver {

		final AtomicInteger bypassed = new AtomicInteger();

		@Override
		public void bypassed(IdempotencyPolicy policy, String key, RuntimeException storeFailure) {
			this.bypassed.incrementAndGet();
		}

	}

	static class Service {

		private final AtomicInteger executions = new AtomicInteger();

		@Idempotent(key = "#key")
		public int charge(String key) {
			return this.executions.incrementAndGet();
		}

		public int count() {
			return this.executions.get();
		}

	}

}
