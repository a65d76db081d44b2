package io.github.idempotent.aot;

import org.junit.jupiter.api.Test;

import org.springframework.aot.generate.ClassNameGenerator;
import org.springframework.aot.generate.DefaultGenerationContext;
import org.springframework.aot.generate.GenerationContext;
import org.springframework.aot.generate.InMemoryGeneratedFiles;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.aot.ApplicationContextAotGenerator;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.javapoet.ClassName;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.core.IdempotentAnnotationAutoConfiguration;
import io.github.idempotent.autoconfigure.IdempotentAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.aot.hint.predicate.RuntimeHintsPredicates.reflection;
import static org.springframework.aot.hint.predicate.RuntimeHintsPredicates.resource;

/**
 * Runs Spring's AOT processing, as {@code spring-boot:process-aot} does, over an
 * application context with the auto-configuration and one {@code @Idempotent} bean, and
 * reads the hints it contributed.
 */
class IdempotentAotProcessingTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class, IdempotentAutoConfiguration.class,
				IdempotentAnnotationAutoConfiguration.class))
		.withPropertyValues("idempotent.default-scope=global", "idempotent.store.type=memory")
		.withBean(Orders.class);

	@Test
	void hintsForTheIdempotentBeanAndTheStarterAreContributed() {
		this.runner.prepare((context) -> {
			GenericApplicationContext source = context.getSourceApplicationContext(GenericApplicationContext.class);
			GenerationContext generation = new DefaultGenerationContext(
					new ClassNameGenerator(ClassName.get(Orders.class)), new InMemoryGeneratedFiles());
			new ApplicationContextAotGenerator().processAheadOfTime(source, generation);
			RuntimeHints hints = generation.getRuntimeHints();
			assertThat(reflection().onMethodInvocation(Orders.class, "place")).accepts(hints);
			assertThat(reflection().onConstructorInvocation(Rejected.class.getDeclaredConstructor(String.class)))
				.accepts(hints);
			assertThat(reflection().onMethodInvocation(Placed.class, "orderNo")).accepts(hints);
			assertThat(reflection().onMethodInvocation(OrderRequest.class, "orderNo")).accepts(hints);
			assertThat(resource().forResource("io/github/idempotent/store/jdbc/schema-postgresql.sql")).accepts(hints);
		});
	}

	public static class Orders {

		@Idempotent(key = "#request.orderNo", cacheFor = Rejected.class)
		public Placed place(OrderRequest request) {
			return new Placed(request.orderNo());
		}

	}

	public record OrderRequest(String orderNo) {
	}

	public record Placed(String orderNo) {
	}

	public static class Rejected extends RuntimeException {

		public Rejected(String message) {
			super(message);
		}

	}

}
