package io.github.idempotent.core;

import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.util.ReflectionUtils;

import io.github.idempotent.autoconfigure.IdempotentAutoConfiguration;
import io.github.idempotent.annotation.DuplicateHandling;
import io.github.idempotent.store.memory.InMemoryIdempotencyStore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The auto-configured {@link IdempotencyTemplate}: its defaults come from the
 * {@code idempotent.*} properties as the annotation's do, its calls are observed and
 * counted like the annotation's, and it needs no Reactor unless a {@code Mono} is asked
 * for.
 */
class IdempotencyTemplateTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class, IdempotentAutoConfiguration.class))
		.withPropertyValues("idempotent.default-scope=global", "idempotent.store.type=memory")
		.withBean(PolicyLog.class);

	@Test
	void isAutoConfiguredAndBacksOffForTheApplicationsOwn() {
		this.runner.run((context) -> assertThat(context).hasSingleBean(IdempotencyTemplate.class));
		this.runner.withBean("own", IdempotencyTemplate.class, () -> ownTemplate())
			.run((context) -> assertThat(context).hasSingleBean(IdempotencyTemplate.class)
				.getBean(IdempotencyTemplate.class)
				.isSameAs(context.getBean("own")));
		this.runner.withPropertyValues("idempotent.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(IdempotencyTemplate.class));
	}

	@Test
	void settingsNotGivenComeFromThePropertiesAsTheAnnotationsDo() {
		this.runner
			.withPropertyValues("idempotent.ttl=2h", "idempotent.lease=20s", "idempotent.wait-for=3s",
					"idempotent.retry-after=4s", "idempotent.max-duration=5m")
			.run((context) -> {
				IdempotencyTemplate template = context.getBean(IdempotencyTemplate.class);
				template.operation("defaults").key("k1").run(() -> {
				});
				template.operation("own")
					.key("k1")
					.ttl(Duration.ofMinutes(1))
					.lease(Duration.ofSeconds(10))
					.waitFor(Duration.ZERO)
					.retryAfter(Duration.ofSeconds(2))
					.maxDuration(Duration.ofMinutes(1))
					.run(() -> {
					});
				template.operation("long-lease").key("k1").lease(Duration.ofMinutes(15)).run(() -> {
				});
				List<IdempotencyPolicy> policies = context.getBean(PolicyLog.class).policies;
				assertThat(policies).hasSize(3);
				IdempotencyPolicy defaults = policies.get(0);
				assertThat(defaults.ttl()).isEqualTo(Duration.ofHours(2));
				assertThat(defaults.lease()).isEqualTo(Duration.ofSeconds(20));
				assertThat(defaults.waitFor()).isEqualTo(Duration.ofSeconds(3));
				assertThat(defaults.retryAfter()).isEqualTo(Duration.ofSeconds(4));
				assertThat(defaults.maxDuration()).isEqualTo(Duration.ofMinutes(5));
				assertThat(defaults.duplicates()).isEqualTo(DuplicateHandling.REPLAY);
				IdempotencyPolicy own = policies.get(1);
				assertThat(own.ttl()).isEqualTo(Duration.ofMinutes(1));
				assertThat(own.lease()).isEqualTo(Duration.ofSeconds(10));
				assertThat(own.waitFor()).isZero();
				assertThat(own.retryAfter()).isEqualTo(Duration.ofSeconds(2));
				assertThat(own.maxDuration()).isEqualTo(Duration.ofMinutes(1));
				// The global max-duration is raised to a longer lease, as for the
				// annotation.
				assertThat(policies.get(2).maxDuration()).isEqualTo(Duration.ofMinutes(15));
			});
	}

	@Test
	void theDuplicateHandlingReachesThePolicy() {
		this.runner.run((context) -> {
			IdempotencyTemplate template = context.getBean(IdempotencyTemplate.class);
			template.operation("skipping").key("k1").duplicates(DuplicateHandling.SKIP).run(() -> {
			});
			template.operation("flagging").key("k1").duplicates(DuplicateHandling.FLAG).run(() -> {
			});
			assertThat(context.getBean(PolicyLog.class).policies).extracting(IdempotencyPolicy::duplicates)
				.containsExactly(DuplicateHandling.SKIP, DuplicateHandling.FLAG);
		});
	}

	@Test
	void invalidSettingsNameTheOperation() {
		this.runner.run((context) -> {
			IdempotencyTemplate template = context.getBean(IdempotencyTemplate.class);
			assertThatIllegalArgumentException()
				.isThrownBy(() -> template.operation("refunds").key("k1").lease(Duration.ZERO).run(() -> {
				}))
				.withMessageContaining("refunds");
			assertThatIllegalArgumentException().isThrownBy(() -> template.operation(" "))
				.withMessageContaining("operation name");
			assertThatIllegalArgumentException()
				.isThrownBy(
						() -> template.operation("refunds").cacheFor(OperationParsingTests.CauseOnlyException.class))
				.withMessageContaining("cacheFor type " + OperationParsingTests.CauseOnlyException.class.getName()
						+ " of refunds needs a constructor taking a String message, or none");
		});
	}

	@Test
	void callsAreObservedAndCountedLikeTheAnnotations() {
		TestObservationRegistry observations = TestObservationRegistry.create();
		this.runner.withBean(ObservationRegistry.class, () -> observations)
			.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
			.run((context) -> {
				IdempotencyTemplate template = context.getBean(IdempotencyTemplate.class);
				template.operation("payments").key("k1").execute(String.class, () -> "paid");
				template.operation("payments").key("k1").execute(String.class, () -> "paid");
				TestObservationRegistryAssert.assertThat(observations)
					.hasNumberOfObservationsWithNameEqualTo("idempotent.call", 2)
					.hasAnObservationWithAKeyValue("operation", "payments");
				MeterRegistry meters = context.getBean(MeterRegistry.class);
				assertThat(meters.get("idempotent.calls").tag("operation", "payments").counters()).isNotEmpty();
			});
	}

	/**
	 * The template and its sync and future calls load no Reactor class: run in a class
	 * loader that has none, as an application without Reactor would, including the
	 * reflection Spring does on a bean's class.
	 */
	@Test
	void worksWithoutReactor() throws Exception {
		URL classes = IdempotencyTemplate.class.getProtectionDomain().getCodeSource().getLocation();
		try (URLClassLoader loader = new WithoutReactor(classes)) {
			Class<?> type = loader.loadClass(WithoutReactorScenario.class.getName());
			ReflectionUtils.getDeclaredMethods(loader.loadClass(IdempotencyTemplate.class.getName()));
			Method run = type.getMethod("run");
			assertThat(run.invoke(null)).isEqualTo("paid paid");
		}
	}

	private static IdempotencyTemplate ownTemplate() {
		return new IdempotencyTemplate(
				new IdempotencyExecutor(new InMemoryIdempotencyStore(), FailureMode.CLOSED, 1024,
						IdempotencyObserver.NONE),
				new JacksonResultCodec(new tools.jackson.databind.json.JsonMapper()), IdempotencyScopeResolver.NONE);
	}

	public static final class WithoutReactorScenario {

		public static String run() throws Exception {
			IdempotencyTemplate template = ownTemplate();
			String first = template.operation("payments").key("k1").execute(String.class, () -> "paid");
			String replay = template.operation("payments")
				.key("k1")
				.executeAsync(String.class, () -> java.util.concurrent.CompletableFuture.completedFuture("again"))
				.get();
			return first + " " + replay;
		}

	}

	/**
	 * Loads the starter's classes (and this test's) itself, and refuses Reactor; the rest
	 * comes from the test's class loader.
	 */
	private static final class WithoutReactor extends URLClassLoader {

		WithoutReactor(URL starterClasses) {
			super(new URL[] { starterClasses,
					WithoutReactorScenario.class.getProtectionDomain().getCodeSource().getLocation() },
					IdempotencyTemplateTests.class.getClassLoader());
		}

		@Override
		protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
			if (name.startsWith("reactor.")) {
				throw new ClassNotFoundException(name);
			}
			if (name.startsWith("io.github.idempotent.")) {
				synchronized (getClassLoadingLock(name)) {
					Class<?> loaded = findLoadedClass(name);
					return (loaded != null) ? loaded : findClass(name);
				}
			}
			return super.loadClass(name, resolve);
		}

	}

	static class PolicyLog implements IdempotencyObserver {

		final List<IdempotencyPolicy> policies = new CopyOnWriteArrayList<>();

		@Override
		public void executed(IdempotencyPolicy policy, String key) {
			this.policies.add(policy);
		}

	}

}
