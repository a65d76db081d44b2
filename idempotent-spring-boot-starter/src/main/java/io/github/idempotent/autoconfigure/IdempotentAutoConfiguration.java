package io.github.idempotent.autoconfigure;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import io.micrometer.observation.ObservationRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.ApplicationContext;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.util.Assert;
import org.springframework.util.ClassUtils;
import org.springframework.util.StringUtils;

import java.util.concurrent.Executor;

import io.micrometer.core.instrument.MeterRegistry;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.json.JsonMapper;

import io.github.idempotent.observation.IdempotencyObservationConvention;
import io.github.idempotent.core.ReleasedStatuses;
import io.github.idempotent.core.IdempotencyExecutor;
import io.github.idempotent.core.IdempotencyObserver;
import io.github.idempotent.core.IdempotencyScopeResolver;
import io.github.idempotent.core.ReactiveIdempotencyScopeResolver;
import io.github.idempotent.core.IdempotencyTemplate;
import io.github.idempotent.core.JacksonResultCodec;
import io.github.idempotent.core.ResultCodec;
import io.github.idempotent.core.ResultConverter;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.web.IdempotentWebProperties;
import io.github.idempotent.web.PrincipalScopeResolver;
import io.github.idempotent.web.ReactivePrincipalScopeResolver;

/**
 * Auto-configuration of {@code @Idempotent} and {@link IdempotencyTemplate}: the store,
 * the executor, the defaults and the template. The interception of {@code @Idempotent}
 * methods is {@code IdempotentAnnotationAutoConfiguration}'s. Every bean backs off when
 * the application defines its own.
 */
@AutoConfiguration(afterName = { "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration",
		"org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
		"org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration" })
@ConditionalOnBooleanProperty(name = "idempotent.enabled", matchIfMissing = true)
@EnableConfigurationProperties({ IdempotentProperties.class, IdempotentWebProperties.class,
		IdempotentObservationProperties.class })
@Import({ StoreConfigurations.Redis.class, StoreConfigurations.RedisMemoryPolicyCheck.class,
		StoreConfigurations.Jdbc.class, StoreConfigurations.Memory.class, StoreConfigurations.LocalCache.class })
public final class IdempotentAutoConfiguration {

	private static final Log logger = LogFactory.getLog(IdempotentAutoConfiguration.class);

	private static final String REACTOR_SCHEDULERS = "reactor.core.scheduler.Schedulers";

	private static final String SECURITY_CONTEXT_HOLDER = "org.springframework.security.core.context.SecurityContextHolder";

	@Bean
	@ConditionalOnMissingBean
	IdempotencyScopeResolver idempotencyScopeResolver(IdempotentProperties properties,
			ConfigurableBeanFactory beanFactory) {
		if (properties.defaultScope() == IdempotentProperties.DefaultScope.PRINCIPAL
				&& ClassUtils.isPresent(SECURITY_CONTEXT_HOLDER, beanFactory.getBeanClassLoader())) {
			return new PrincipalScopeResolver();
		}
		return IdempotencyScopeResolver.NONE;
	}

	/**
	 * Scope of reactive calls: asked with the Reactor context's caller bound to the
	 * thread when it scopes by Spring Security's principal.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(Mono.class)
	static class ReactiveScopeConfiguration {

		@Bean
		@ConditionalOnMissingBean
		ReactiveIdempotencyScopeResolver reactiveIdempotencyScopeResolver(IdempotencyScopeResolver scopeResolver) {
			// A PrincipalScopeResolver means Spring Security: its methods name its types.
			return (scopeResolver instanceof PrincipalScopeResolver) ? new ReactivePrincipalScopeResolver(scopeResolver)
					: ReactiveIdempotencyScopeResolver.of(scopeResolver);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(MeterRegistry.class)
	static class MetricsConfiguration {

		@Bean
		@ConditionalOnMissingBean
		IdempotencyMetrics idempotencyMetrics(ObjectProvider<MeterRegistry> registry) {
			return new IdempotencyMetrics(registry);
		}

	}

	@Bean
	@ConditionalOnMissingBean
	ResultCodec idempotentResultCodec(ObjectProvider<JsonMapper> jsonMapper,
			ObjectProvider<ResultConverter> converters) {
		return new JacksonResultCodec(jsonMapper.getIfAvailable(JsonMapper::new), converters.orderedStream().toList());
	}

	@Bean
	@ConditionalOnMissingBean
	IdempotencyExecutor idempotencyExecutor(IdempotencyStore store, IdempotentProperties properties,
			ObjectProvider<IdempotencyObserver> observers, ObjectProvider<ResultCodec> codec,
			ConfigurableBeanFactory beanFactory) {
		IdempotencyExecutor executor = new IdempotencyExecutor(store, properties.failureMode(),
				properties.maxResultSize().toBytes(),
				IdempotencyObserver.composite(observers.orderedStream().toList()));
		// Here too, not only in idempotencyExecutorSettings: an executor created before
		// the post-processors (a bean one of them needs) must still read placeholders.
		executor.setOperationParsing(codec::getObject, beanFactory);
		if (ClassUtils.isPresent(REACTOR_SCHEDULERS, IdempotentAutoConfiguration.class.getClassLoader())) {
			executor.setBlockingStoreExecutor(BoundedElastic.executor());
		}
		IdempotentResultCompressionProperties compression = properties.resultCompression();
		if (compression.enabled()) {
			// Negative turns compression off on the executor: a mistake here, as before.
			long threshold = compression.threshold().toBytes();
			Assert.isTrue(threshold >= 0,
					() -> "idempotent.result-compression.threshold must not be negative, not " + compression.threshold()
							+ ": set idempotent.result-compression.enabled=false to store results as they are");
			executor.setResultCompressionThreshold(threshold);
		}
		return executor;
	}

	/**
	 * Keys, fingerprints, observations and the settings an operation names none of as
	 * configured, for the application's own executor too: a bean that replaced the
	 * default must not write under another key prefix or with unkeyed fingerprints.
	 */
	@Bean
	static BeanPostProcessor idempotencyExecutorSettings(ObjectProvider<IdempotentProperties> properties,
			ObjectProvider<IdempotentWebProperties> webProperties, ObjectProvider<JsonMapper> jsonMapper,
			ObjectProvider<ObservationRegistry> observations,
			ObjectProvider<IdempotencyObservationConvention> observationConvention,
			ObjectProvider<IdempotentObservationProperties> observationProperties, ObjectProvider<ResultCodec> codec,
			ConfigurableBeanFactory beanFactory) {
		return new BeanPostProcessor() {

			@Override
			public Object postProcessBeforeInitialization(Object bean, String beanName) {
				if (bean instanceof IdempotencyExecutor executor) {
					IdempotentProperties settings = properties.getObject();
					String secret = settings.fingerprintSecret();
					if (!StringUtils.hasText(secret)) {
						secret = null;
						logger.info("Payload fingerprints are unkeyed SHA-256: whoever reads a record can test guesses "
								+ "of a low-entropy field of its payload (a card number) against it. Set "
								+ "idempotent.fingerprint-secret, the same on every instance, to key them");
					}
					executor.setFingerprinting(jsonMapper.getIfAvailable(JsonMapper::new), secret);
					// For the interception of beans and the web layer's handler adapters
					// alike, so that either can go without the other.
					executor.setOperationParsing(codec::getObject, beanFactory);
					executor.setKeyPrefix(settings.keyPrefix());
					executor.setMaxKeyLength(settings.maxKeyLength());
					ReleasedStatuses releaseOnStatus;
					try {
						releaseOnStatus = ReleasedStatuses.of(webProperties.getObject().releaseOnStatus());
					}
					catch (IllegalArgumentException ex) {
						throw new IllegalStateException("idempotent.web.release-on-status: " + ex.getMessage(), ex);
					}
					executor.setOperationDefaults(settings.ttl(), settings.lease(), settings.waitFor(),
							settings.inProcessWaitFor(), settings.retryAfter(), settings.maxDuration(),
							releaseOnStatus);
					observations.ifAvailable((registry) -> executor.observeWith(registry,
							observationConvention.getIfUnique(), observationProperties.getObject().includeKey()));
				}
				return bean;
			}

		};
	}

	/**
	 * On shutdown, ends duplicates waiting for a call in progress with 503, before the
	 * web server's graceful shutdown would wait for them and the store stops; not when a
	 * child context (the management server's) closes.
	 */
	@Bean
	static ApplicationListener<ContextClosedEvent> idempotencyStopWaitingOnClose(ApplicationContext context,
			ObjectProvider<IdempotencyExecutor> executor) {
		return (event) -> {
			if (event.getApplicationContext() == context) {
				executor.ifAvailable(IdempotencyExecutor::stopWaiting);
			}
		};
	}

	/** Blocking store calls of asynchronous callers, on Reactor's bounded elastic. */
	static final class BoundedElastic {

		static Executor executor() {
			return (task) -> Schedulers.boundedElastic().schedule(task);
		}

	}

	@Bean
	@ConditionalOnMissingBean
	IdempotencyTemplate idempotencyTemplate(IdempotencyExecutor executor, ResultCodec codec,
			IdempotencyScopeResolver scopeResolver,
			ObjectProvider<ReactiveIdempotencyScopeResolver> reactiveScopeResolver) {
		IdempotencyTemplate template = new IdempotencyTemplate(executor, codec, scopeResolver);
		reactiveScopeResolver.ifAvailable(template::setReactiveScopeResolver);
		return template;
	}

}
