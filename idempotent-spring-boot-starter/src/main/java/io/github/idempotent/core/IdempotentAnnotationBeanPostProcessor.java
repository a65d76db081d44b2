package io.github.idempotent.core;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

import org.aopalliance.intercept.MethodInterceptor;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.MethodMatcher;
import org.springframework.aop.Pointcut;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.aop.support.annotation.AnnotationMethodMatcher;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.core.Ordered;
import org.springframework.util.function.SingletonSupplier;

import io.github.idempotent.annotation.Idempotent;

/**
 * Proxies beans with {@code @Idempotent} methods, as Spring proxies {@code @Async} ones,
 * and parses every annotated method once all singletons exist.
 */
class IdempotentAnnotationBeanPostProcessor extends AbstractBeanFactoryAwareAdvisingPostProcessor
		implements SmartInitializingSingleton {

	private static final Log logger = LogFactory.getLog(IdempotentAnnotationBeanPostProcessor.class);

	private final List<Class<?>> proxiedClasses = new ArrayList<>();

	IdempotentAnnotationBeanPostProcessor() {
		setBeforeExistingAdvisors(true);
		setProxyTargetClass(true);
		// Ahead of the Rabbit and Kafka listener post-processors, so that they register
		// the proxy, not the target.
		setOrder(Ordered.LOWEST_PRECEDENCE - 1);
	}

	@Override
	public void setBeanFactory(BeanFactory beanFactory) {
		super.setBeanFactory(beanFactory);
		// Looked up on first use, so that the store is not created early.
		Supplier<IdempotentInterceptor> interceptor = SingletonSupplier
			.of(() -> beanFactory.getBean(IdempotentInterceptor.class));
		this.advisor = new DefaultPointcutAdvisor(new IdempotentMethods(),
				(MethodInterceptor) (invocation) -> interceptor.get().invoke(invocation));
	}

	// Those the web layer guards too: all are parsed at start-up.
	private static final Pointcut ANNOTATED = new AnnotationMatchingPointcut(null, Idempotent.class, true);

	@Override
	public Object postProcessAfterInitialization(Object bean, String beanName) {
		Object result = super.postProcessAfterInitialization(bean, beanName);
		if (result != bean || AopUtils.canApply(ANNOTATED, AopUtils.getTargetClass(bean))) {
			synchronized (this.proxiedClasses) {
				this.proxiedClasses.add(AopUtils.getTargetClass(bean));
			}
		}
		return result;
	}

	@Override
	public void afterSingletonsInstantiated() {
		IdempotentOperationSource operations = this.beanFactory.getBean(IdempotencyExecutor.class).operations();
		synchronized (this.proxiedClasses) {
			this.proxiedClasses.forEach(operations::parseAll);
			this.proxiedClasses.clear();
		}
		IdempotencyScopeResolver scopes = this.beanFactory.getBeanProvider(IdempotencyScopeResolver.class)
			.getIfAvailable();
		if (scopes == null || scopes.separatesCallers()) {
			return;
		}
		List<String> shared = operations.parsed()
			.stream()
			.filter((operation) -> operation.key() == null && operation.scope() == null)
			// A listener answers nobody, so no caller reads another's response.
			.filter((operation) -> !operation.messageListener())
			.map(IdempotentOperation::describe)
			.sorted()
			.toList();
		if (!shared.isEmpty()) {
			logger.warn("@Idempotent methods " + shared + " take their key from the request header, and every caller "
					+ "shares one scope (no Spring Security, or idempotent.default-scope=global): a caller who sends "
					+ "another caller's key gets that caller's stored response. Scope keys with "
					+ "@Idempotent(scope = ...), for example by an API client id or tenant; see "
					+ "docs/guide.md, 'Scope'");
		}
	}

	// All but the HTTP handlers that the web layer guards itself.
	private static final class IdempotentMethods extends StaticMethodMatcherPointcut {

		private final MethodMatcher annotated = new AnnotationMethodMatcher(Idempotent.class, true);

		@Override
		public boolean matches(java.lang.reflect.Method method, Class<?> targetClass) {
			return this.annotated.matches(method, targetClass)
					&& !IdempotentOperationSource.isGuardedByWeb(AopUtils.getMostSpecificMethod(method, targetClass));
		}

	}

}
