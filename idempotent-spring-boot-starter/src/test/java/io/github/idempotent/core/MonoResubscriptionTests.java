package io.github.idempotent.core;

import java.util.concurrent.atomic.AtomicInteger;

import org.aopalliance.intercept.MethodInterceptor;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import org.springframework.aop.framework.ProxyFactory;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.Ordered;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.autoconfigure.IdempotentAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A {@code Mono} method subscribed again ({@code retry()} after a failure that released
 * its key) goes through the advice behind {@code @Idempotent} again (a transaction, a
 * security check), not straight to the method.
 */
class MonoResubscriptionTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class, IdempotentAutoConfiguration.class,
				IdempotentAnnotationAutoConfiguration.class))
		.withPropertyValues("idempotent.default-scope=global", "idempotent.store.type=memory")
		.withBean(AdvisedCharges.class)
		.withBean(Charges.class);

	@Test
	void aRetriedMonoRunsTheAdviceBehindTheAnnotationAgain() {
		this.runner.run((context) -> {
			Charges charges = context.getBean(Charges.class);
			AdvisedCharges advice = context.getBean(AdvisedCharges.class);
			StepVerifier.create(charges.charge("k-retried").retry(1)).expectNext("charged #2").verifyComplete();
			assertThat(charges.runs()).isEqualTo(2);
			assertThat(advice.calls()).as("calls through the advice behind @Idempotent").isEqualTo(2);
		});
	}

	/**
	 * Advises {@link Charges} before {@code @Idempotent} does, as a transaction or a
	 * security auto-proxy would: its advice then runs behind the annotation's.
	 */
	static class AdvisedCharges implements BeanPostProcessor, Ordered {

		private final AtomicInteger calls = new AtomicInteger();

		@Override
		public Object postProcessAfterInitialization(Object bean, String beanName) {
			if (!(bean instanceof Charges)) {
				return bean;
			}
			ProxyFactory proxy = new ProxyFactory(bean);
			proxy.setProxyTargetClass(true);
			proxy.addAdvice((MethodInterceptor) (invocation) -> {
				if (invocation.getMethod().getName().equals("charge")) {
					this.calls.incrementAndGet();
				}
				return invocation.proceed();
			});
			return proxy.getProxy();
		}

		@Override
		public int getOrder() {
			return 0;
		}

		int calls() {
			return this.calls.get();
		}

	}

	static class Charges {

		private final AtomicInteger runs = new AtomicInteger();

		@Idempotent(key = "#key")
		public Mono<String> charge(String key) {
			return Mono.defer(() -> {
				int run = this.runs.incrementAndGet();
				return (run == 1) ? Mono.error(new IllegalStateException("gateway timeout"))
						: Mono.just("charged #" + run);
			});
		}

		int runs() {
			return this.runs.get();
		}

	}

}
