package io.github.idempotent.web;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.aot.generate.ClassNameGenerator;
import org.springframework.aot.generate.DefaultGenerationContext;
import org.springframework.aot.generate.GenerationContext;
import org.springframework.aot.generate.InMemoryGeneratedFiles;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.AbstractApplicationContextRunner;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.context.aot.ApplicationContextAotGenerator;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.javapoet.ClassName;

import io.github.idempotent.core.IdempotentAnnotationAutoConfiguration;
import io.github.idempotent.autoconfigure.IdempotentAutoConfiguration;
import io.github.idempotent.web.ResponseEntityResultConverter.StoredResponse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.aot.hint.predicate.RuntimeHintsPredicates.reflection;

/**
 * The stored form of a {@code ResponseEntity} is bound for native images wherever the web
 * auto-configuration applies, and only there.
 */
class WebRuntimeHintsTests {

	private static final AutoConfigurations CONFIGURATIONS = AutoConfigurations.of(JacksonAutoConfiguration.class,
			IdempotentAutoConfiguration.class, IdempotentAnnotationAutoConfiguration.class,
			IdempotentWebMvcAutoConfiguration.class);

	@Test
	void theStoredFormOfAResponseEntityIsBound() {
		processAheadOfTime(new WebApplicationContextRunner().withConfiguration(CONFIGURATIONS), (hints) -> {
			assertThat(reflection().onConstructorInvocation(
					StoredResponse.class.getDeclaredConstructor(int.class, Map.class, Object.class)))
				.accepts(hints);
			for (String accessor : List.of("status", "headers", "body")) {
				assertThat(reflection().onMethodInvocation(StoredResponse.class, accessor)).accepts(hints);
			}
		});
	}

	@Test
	void contributedByAotProcessingOfAWebApplication() {
		processAheadOfTime(new WebApplicationContextRunner().withConfiguration(CONFIGURATIONS),
				(hints) -> assertThat(reflection().onType(StoredResponse.class)).accepts(hints));
	}

	@Test
	void notContributedOutsideAWebApplication() {
		processAheadOfTime(new ApplicationContextRunner().withConfiguration(CONFIGURATIONS),
				(hints) -> assertThat(reflection().onType(StoredResponse.class)).rejects(hints));
	}

	private static void processAheadOfTime(AbstractApplicationContextRunner<?, ?, ?> runner, HintsAssertion assertion) {
		runner.withPropertyValues("idempotent.default-scope=global", "idempotent.store.type=memory")
			.prepare((context) -> {
				GenericApplicationContext source = (GenericApplicationContext) context.getSourceApplicationContext();
				GenerationContext generation = new DefaultGenerationContext(
						new ClassNameGenerator(ClassName.get(WebRuntimeHintsTests.class)),
						new InMemoryGeneratedFiles());
				new ApplicationContextAotGenerator().processAheadOfTime(source, generation);
				assertion.check(generation.getRuntimeHints());
			});
	}

	private interface HintsAssertion {

		void check(RuntimeHints hints) throws Exception;

	}

}
