package io.github.idempotent.autoconfigure;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.util.context.Context;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.scheduling.annotation.Async;
import org.springframework.security.authentication.TestingAuthenticationToken;
import org.springframework.security.core.context.SecurityContextHolder;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.core.IdempotentAnnotationAutoConfiguration;
import io.github.idempotent.core.IdempotencyExecutor;
import io.github.idempotent.core.IdempotencyKeyException;
import io.github.idempotent.core.IdempotencyObserver;
import io.github.idempotent.core.IdempotencyPolicy;
import io.github.idempotent.core.IdempotentOperation;
import io.github.idempotent.core.FailureMode;
import io.github.idempotent.core.IdempotencyScopeException;
import io.github.idempotent.core.IdempotencyScopeResolver;
import io.github.idempotent.core.IdempotencyStoreFullException;
import io.github.idempotent.core.ReactiveIdempotencyScopeResolver;
import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.StoredResult;
import io.github.idempotent.store.memory.InMemoryIdempotencyStore;
import io.github.idempotent.store.memory.InMemoryStoreFullException;
import io.github.idempotent.store.redis.RedisIdempotencyStore;
import io.github.idempotent.testsupport.TestRedis;
import io.github.idempotent.web.PrincipalScopeResolver;
import io.github.idempotent.web.ReactivePrincipalScopeResolver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class IdempotentAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class, DataRedisAutoConfiguration.class,
				IdempotentAutoConfiguration.class, IdempotentAnnotationAutoConfiguration.class))
		.withPropertyValues("spring.data.redis.host=" + TestRedis.host(), "spring.data.redis.port=" + TestRedis.port(),
				"idempotent.default-scope=global");

	@Test
	void redisStoreWhenARedisConnectionFactoryExists() {
		this.runner.run((context) -> {
			assertThat(context).hasSingleBean(RedisConnectionFactory.class);
			assertThat(context).hasSingleBean(RedisIdempotencyStore.class);
			assertThat(context).hasSingleBean(IdempotencyExecutor.class);
		});
	}

	@Test
	void memoryStoreWhenRedisIsNotOnTheClasspath() {
		this.runner.withClassLoader(new FilteredClassLoader("org.springframework.data.redis")).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(IdempotencyStore.class)).isInstanceOf(InMemoryIdempotencyStore.class);
		});
	}

	@Test
	void closingTheContextEndsWaitingDuplicatesButClosingAChildContextDoesNot() {
		AtomicInteger stops = new AtomicInteger();
		this.runner.withPropertyValues("idempotent.store.type=memory")
			.withBean(IdempotencyExecutor.class, () -> new IdempotencyExecutor(new InMemoryIdempotencyStore(),
					FailureMode.CLOSED, 1024, IdempotencyObserver.composite(List.of())) {

				@Override
				public void stopWaiting() {
					stops.incrementAndGet();
					super.stopWaiting();
				}

			})
			.run((context) -> {
				try (AnnotationConfigApplicationContext child = new AnnotationConfigApplicationContext()) {
					child.setParent(context.getSourceApplicationContext());
					child.refresh();
				}
				assertThat(stops).hasValue(0);
			});
		assertThat(stops).hasValue(1);
	}

	@Test
	void memoryStoreWhenAskedForEvenWithRedis() {
		this.runner.withPropertyValues("idempotent.store.type=memory")
			.run((context) -> assertThat(context.getBean(IdempotencyStore.class))
				.isInstanceOf(InMemoryIdempotencyStore.class));
	}

	@Test
	void fullMemoryStoreRefusesNewKeys() {
		this.runner.withPropertyValues("idempotent.store.type=memory", "idempotent.store.memory.maximum-records=1")
			.withUserConfiguration(AnnotatedServiceConfiguration.class)
			.run((context) -> {
				AnnotatedService service = context.getBean(AnnotatedService.class);
				assertThat(service.next("a")).isEqualTo(1);
				assertThatExceptionOfType(IdempotencyStoreFullException.class).isThrownBy(() -> service.next("b"))
					.withMessageContaining("idempotent.store.memory.maximum-records");
				assertThat(service.next("a")).isEqualTo(1);
			});
	}

	@Test
	void fingerprintsAreKeyedWithTheConfiguredSecretAndEqualAcrossInstances() {
		Map<String, Object> payment = Map.of("orderNo", "A-1", "cardNumber", "4111111111111111");
		Fingerprint[] unkeyed = new Fingerprint[1];
		this.runner.run((context) -> unkeyed[0] = fingerprint(context, payment));
		Fingerprint[] keyed = new Fingerprint[2];
		for (int instance = 0; instance < 2; instance++) {
			int i = instance;
			this.runner.withPropertyValues("idempotent.fingerprint-secret=s3cr3t-shared-by-every-instance")
				.run((context) -> {
					keyed[i] = fingerprint(context, payment);
				});
		}
		assertThat(keyed[0]).isEqualTo(keyed[1]).isNotEqualTo(unkeyed[0]);
		this.runner.withPropertyValues("idempotent.fingerprint-secret=another-secret")
			.run((context) -> assertThat(fingerprint(context, payment)).isNotEqualTo(keyed[0]));
	}

	private static Fingerprint fingerprint(ApplicationContext context, Object payload) {
		return context.getBean(IdempotencyExecutor.class).fingerprint(payload, "test", "");
	}

	@Test
	void fullMemoryStoreRefusesNewKeysEvenWhenFailingOpen() {
		this.runner
			.withPropertyValues("idempotent.store.type=memory", "idempotent.store.memory.maximum-records=1",
					"idempotent.failure-mode=open")
			.withUserConfiguration(AnnotatedServiceConfiguration.class)
			.run((context) -> {
				AnnotatedService service = context.getBean(AnnotatedService.class);
				assertThat(service.next("a")).isEqualTo(1);
				assertThatExceptionOfType(IdempotencyStoreFullException.class).isThrownBy(() -> service.next("b"));
				assertThatExceptionOfType(IdempotencyStoreFullException.class).isThrownBy(() -> service.next("b"));
				assertThat(service.next("a")).isEqualTo(1);
			});
	}

	@Test
	void memoryStoreIsBoundedInBytesAndPerScope() {
		this.runner
			.withPropertyValues("idempotent.store.type=memory", "idempotent.store.memory.maximum-size=2KB",
					"idempotent.store.memory.maximum-size-per-scope=1KB")
			.run((context) -> {
				InMemoryIdempotencyStore store = context.getBean(InMemoryIdempotencyStore.class);
				Fingerprint fp = new Fingerprint("fp");
				StoredResult result = new StoredResult(new byte[700]);
				String token = ((ClaimResult.Acquired) store.claim(new RecordKey("p:u=a:op:1"), fp,
						Duration.ofMinutes(1)))
					.token();
				store.complete(new RecordKey("p:u=a:op:1"), token, fp, result, Duration.ofMinutes(1));
				assertThatExceptionOfType(InMemoryStoreFullException.class)
					.isThrownBy(() -> store.claim(new RecordKey("p:u=a:op:2"), fp, Duration.ofMinutes(1)))
					.withMessageContaining("scope 'u=a'");
				assertThat(store.claim(new RecordKey("p:u=b:op:1"), fp, Duration.ofMinutes(1)))
					.isInstanceOf(ClaimResult.Acquired.class);
			});
	}

	@Test
	void redisStoreRequestedWithoutRedisFailsWithAClearMessage() {
		this.runner.withClassLoader(new FilteredClassLoader("org.springframework.data.redis"))
			.withPropertyValues("idempotent.store.type=redis")
			.run((context) -> assertThat(context).getFailure()
				.hasStackTraceContaining("idempotent.store.type=redis but there is no RedisConnectionFactory"));
	}

	@Test
	void backsOffWhenTheApplicationDefinesItsOwnStore() {
		this.runner.withUserConfiguration(CustomStoreConfiguration.class).run((context) -> {
			assertThat(context).hasSingleBean(IdempotencyStore.class);
			assertThat(context.getBean(IdempotencyStore.class)).isSameAs(CustomStoreConfiguration.STORE);
		});
	}

	@Test
	void anExecutorOfTheApplicationTakesTheConfiguredKeysFingerprintsAndDefaults() {
		this.runner
			.withPropertyValues("idempotent.key-prefix=pay", "idempotent.max-key-length=16",
					"idempotent.fingerprint-secret=s3cr3t", "idempotent.ttl=2h")
			.withBean(IdempotencyExecutor.class,
					() -> new IdempotencyExecutor(new InMemoryIdempotencyStore(), FailureMode.CLOSED, 1024,
							IdempotencyObserver.NONE))
			.run((context) -> {
				IdempotencyExecutor executor = context.getBean(IdempotencyExecutor.class);
				assertThat(executor.recordKey("op", "global", "k").value()).startsWith("pay:");
				assertThat(executor.fingerprint("p", "test", ""))
					.isNotEqualTo(new IdempotencyExecutor(new InMemoryIdempotencyStore(), FailureMode.CLOSED, 1024,
							IdempotencyObserver.NONE)
						.fingerprint("p", "test", ""));
				assertThatExceptionOfType(IdempotencyKeyException.class)
					.isThrownBy(() -> executor.checkKey("op", "k".repeat(17), null));
				assertThat(policyOf(executor, "pay").ttl()).isEqualTo(Duration.ofHours(2));
			});
	}

	@Test
	void anExecutorBuiltWithoutTheAutoConfigurationTakesTheDefaultsOfTheProperties() {
		this.runner.withPropertyValues("idempotent.store.type=memory").run((context) -> {
			IdempotencyExecutor configured = context.getBean(IdempotencyExecutor.class);
			try (IdempotencyExecutor own = new IdempotencyExecutor(new InMemoryIdempotencyStore(), FailureMode.CLOSED,
					1024, IdempotencyObserver.NONE)) {
				IdempotencyPolicy ownPolicy = policyOf(own, "pay");
				IdempotencyPolicy configuredPolicy = policyOf(configured, "pay");
				assertThat(ownPolicy)
					.extracting(IdempotencyPolicy::ttl, IdempotencyPolicy::lease, IdempotencyPolicy::waitFor,
							IdempotencyPolicy::retryAfter, IdempotencyPolicy::maxDuration,
							IdempotencyPolicy::releaseOnStatus)
					.containsExactly(configuredPolicy.ttl(), configuredPolicy.lease(), configuredPolicy.waitFor(),
							configuredPolicy.retryAfter(), configuredPolicy.maxDuration(),
							configuredPolicy.releaseOnStatus());
				assertThat(policyOf(own, "ship").waitFor()).isEqualTo(policyOf(configured, "ship").waitFor());
			}
		});
	}

	private static IdempotencyPolicy policyOf(IdempotencyExecutor executor, String method) throws Exception {
		IdempotentOperation operation = executor.operation(Guarded.class.getMethod(method, String.class),
				Guarded.class);
		assertThat(operation).isNotNull();
		return operation.policy();
	}

	/** Takes every setting from the executor's defaults. */
	static class Guarded {

		@Idempotent(key = "#id")
		public String pay(String id) {
			return id;
		}

		/** A duplicate of an @Async call waits the in-process default. */
		@Async
		@Idempotent(key = "#id")
		public String ship(String id) {
			return id;
		}

	}

	@Test
	void backsOffWhenTheApplicationDefinesItsOwnScopeResolver() {
		this.runner.withBean(IdempotencyScopeResolver.class, () -> () -> "tenant-1")
			.run((context) -> assertThat(context.getBean(IdempotencyScopeResolver.class).resolveScope())
				.isEqualTo("tenant-1"));
	}

	@Test
	void disabledFlagTurnsEverythingOff() {
		this.runner.withPropertyValues("idempotent.enabled=false").run((context) -> {
			assertThat(context).doesNotHaveBean(IdempotencyStore.class);
			assertThat(context).doesNotHaveBean(IdempotencyExecutor.class);
		});
	}

	@Test
	void disabledFlagLeavesAnnotatedBeansUnproxied() {
		this.runner.withPropertyValues("idempotent.enabled=false")
			.withUserConfiguration(AnnotatedServiceConfiguration.class)
			.run((context) -> {
				AnnotatedService service = context.getBean(AnnotatedService.class);
				assertThat(service.next("k")).isEqualTo(1);
				assertThat(service.next("k")).isEqualTo(2);
			});
	}

	@Test
	void scopeIsThePrincipalWhenSpringSecurityIsPresent() {
		this.runner.withPropertyValues("idempotent.default-scope=principal").run((context) -> {
			IdempotencyScopeResolver resolver = context.getBean(IdempotencyScopeResolver.class);
			assertThat(resolver).isInstanceOf(PrincipalScopeResolver.class);
			// No caller on this thread, and no request: never the global scope.
			assertThatExceptionOfType(IdempotencyScopeException.class).isThrownBy(resolver::resolveScope);
			SecurityContextHolder.getContext()
				.setAuthentication(new TestingAuthenticationToken("alice", "secret", "ROLE_USER"));
			try {
				assertThat(resolver.resolveScope()).isEqualTo("u=alice");
			}
			finally {
				SecurityContextHolder.clearContext();
			}
		});
	}

	@Test
	void scopeIsGlobalWithoutSpringSecurityOrWhenConfigured() {
		this.runner.withClassLoader(new FilteredClassLoader(SecurityContextHolder.class))
			.withPropertyValues("idempotent.default-scope=principal")
			.run((context) -> assertThat(context.getBean(IdempotencyScopeResolver.class).resolveScope())
				.isEqualTo(IdempotencyScopeResolver.GLOBAL));
		this.runner.withPropertyValues("idempotent.default-scope=global")
			.run((context) -> assertThat(context.getBean(IdempotencyScopeResolver.class))
				.isNotInstanceOf(PrincipalScopeResolver.class));
	}

	@Test
	void reactiveCallsAreScopedByTheScopeResolverWhereReactorIs() {
		this.runner.withPropertyValues("idempotent.default-scope=principal")
			.run((context) -> assertThat(context.getBean(ReactiveIdempotencyScopeResolver.class))
				.isInstanceOf(ReactivePrincipalScopeResolver.class));
		this.runner.withBean(IdempotencyScopeResolver.class, () -> () -> "tenant-1")
			.run((context) -> assertThat(
					context.getBean(ReactiveIdempotencyScopeResolver.class).resolveScope(Context.empty()).block())
				.isEqualTo("tenant-1"));
		ReactiveIdempotencyScopeResolver own = (reactorContext) -> Mono.just("tenant-2");
		this.runner.withBean(ReactiveIdempotencyScopeResolver.class, () -> own)
			.run((context) -> assertThat(context.getBean(ReactiveIdempotencyScopeResolver.class)).isSameAs(own));
		this.runner.withClassLoader(new FilteredClassLoader(Mono.class))
			.run((context) -> assertThat(context).hasSingleBean(IdempotencyScopeResolver.class)
				.doesNotHaveBean(ReactiveIdempotencyScopeResolver.class));
	}

	@Test
	void malformedKeyExpressionFailsTheStartupNamingTheMethod() {
		this.runner.withUserConfiguration(MalformedServiceConfiguration.class)
			.run((context) -> assertThat(context).getFailure()
				.hasStackTraceContaining("@Idempotent on " + MalformedService.class.getName()
						+ "#charge(java.lang.String): key expression '#request.(' does not parse"));
	}

	@Test
	void malformedDurationFailsTheStartupNamingTheMethod() {
		this.runner.withUserConfiguration(BadDurationServiceConfiguration.class)
			.withPropertyValues("payments.ttl=forever")
			.run((context) -> assertThat(context).getFailure()
				.hasStackTraceContaining("@Idempotent on " + BadDurationService.class.getName()
						+ "#charge(java.lang.String): ttl '${payments.ttl}' "
						+ "(resolved to 'forever') is not a duration"));
	}

	@Configuration(proxyBeanMethods = false)
	static class CustomStoreConfiguration {

		static final IdempotencyStore STORE = new InMemoryIdempotencyStore();

		@Bean
		IdempotencyStore customStore() {
			return STORE;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class AnnotatedServiceConfiguration {

		@Bean
		AnnotatedService annotatedService() {
			return new AnnotatedService();
		}

	}

	static class AnnotatedService {

		private int calls;

		@Idempotent(key = "#key")
		public int next(String key) {
			return ++this.calls;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class MalformedServiceConfiguration {

		@Bean
		MalformedService malformedService() {
			return new MalformedService();
		}

	}

	static class MalformedService {

		@Idempotent(key = "#request.(")
		public String charge(String request) {
			return request;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class BadDurationServiceConfiguration {

		@Bean
		BadDurationService badDurationService() {
			return new BadDurationService();
		}

	}

	static class BadDurationService {

		@Idempotent(key = "#p0", ttl = "${payments.ttl}")
		public String charge(String request) {
			return request;
		}

	}

}
