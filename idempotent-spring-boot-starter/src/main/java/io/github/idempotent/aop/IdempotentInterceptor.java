package io.github.idempotent.aop;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.EvaluationException;
import org.springframework.expression.Expression;
import org.springframework.util.Assert;
import org.springframework.util.StringUtils;

import io.github.idempotent.core.Fingerprint;
import io.github.idempotent.core.Fingerprinter;
import io.github.idempotent.core.IdempotencyExecutor;
import io.github.idempotent.core.IdempotencyKey;
import io.github.idempotent.core.IdempotencyKeyException;
import io.github.idempotent.core.IdempotencyKeyResolver;
import io.github.idempotent.core.IdempotencyScopeResolver;

/**
 * Applies {@code @Idempotent}: evaluates the key, scope and payload of a call against its
 * arguments and hands the call to the {@link IdempotencyExecutor}. No parsing and no
 * annotation lookup happen here beyond the first call of a method.
 */
public class IdempotentInterceptor implements MethodInterceptor {

	private final IdempotentOperationSource operations;

	private final IdempotencyExecutor executor;

	private final Fingerprinter fingerprinter;

	private final IdempotencyKeyResolver keyResolver;

	private final IdempotencyScopeResolver scopeResolver;

	private final String keyPrefix;

	private final int maxKeyLength;

	private final @Nullable BeanFactoryResolver beanResolver;

	public IdempotentInterceptor(IdempotentOperationSource operations, IdempotencyExecutor executor,
			Fingerprinter fingerprinter, IdempotencyKeyResolver keyResolver, IdempotencyScopeResolver scopeResolver,
			String keyPrefix, int maxKeyLength, @Nullable BeanFactory beanFactory) {
		Assert.hasText(keyPrefix, "keyPrefix must not be empty");
		Assert.isTrue(maxKeyLength > 0, "maxKeyLength must be positive");
		this.operations = operations;
		this.executor = executor;
		this.fingerprinter = fingerprinter;
		this.keyResolver = keyResolver;
		this.scopeResolver = scopeResolver;
		this.keyPrefix = keyPrefix;
		this.maxKeyLength = maxKeyLength;
		this.beanResolver = (beanFactory != null) ? new BeanFactoryResolver(beanFactory) : null;
	}

	@Override
	public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
		Object target = invocation.getThis();
		Class<?> targetClass = (target != null) ? AopUtils.getTargetClass(target) : null;
		IdempotentOperation operation = this.operations.get(invocation.getMethod(), targetClass);
		if (operation == null) {
			return invocation.proceed();
		}
		Object[] args = invocation.getArguments();
		Call call = new Call(operation, args, target);
		String key = call.key();
		if (key == null) {
			if (operation.required()) {
				throw new IdempotencyKeyException("Idempotency key is required by " + operation.policy().name()
						+ ((operation.key() != null)
								? ": expression '" + operation.key().getExpressionString() + "' of "
										+ operation.describe() + " evaluated to null or blank"
								: ": send it in " + this.keyResolver.describeSource()));
			}
			return invocation.proceed();
		}
		if (key.length() > this.maxKeyLength) {
			throw new IdempotencyKeyException("Idempotency key of " + operation.policy().name() + " is " + key.length()
					+ " characters, longer than idempotent.max-key-length=" + this.maxKeyLength
					+ "; send a shorter key, such as a UUID");
		}
		IdempotencyKey storeKey = IdempotencyKey.of(this.keyPrefix, call.scope(), operation.policy().name(), key,
				this.executor.getStore().maxKeyLength());
		Fingerprint fingerprint = this.fingerprinter.fingerprint(call.payload());
		return this.executor.execute(operation.policy(), key, storeKey, fingerprint, invocation::proceed);
	}

	/**
	 * One call's evaluation; the SpEL context is created only if an expression needs it.
	 */
	private final class Call {

		private final IdempotentOperation operation;

		private final Object[] args;

		private final @Nullable Object target;

		private @Nullable EvaluationContext context;

		Call(IdempotentOperation operation, Object[] args, @Nullable Object target) {
			this.operation = operation;
			this.args = args;
			this.target = target;
		}

		@Nullable String key() {
			Expression expression = this.operation.key();
			Object value = (expression != null) ? evaluate(expression, "key")
					: IdempotentInterceptor.this.keyResolver.resolveKey();
			if (value == null) {
				return null;
			}
			String key = value.toString();
			return StringUtils.hasText(key) ? key : null;
		}

		String scope() {
			Expression expression = this.operation.scope();
			if (expression == null) {
				return IdempotentInterceptor.this.scopeResolver.resolveScope();
			}
			Object value = evaluate(expression, "scope");
			if (value == null || !StringUtils.hasText(value.toString())) {
				throw new IdempotencyKeyException("Scope expression '" + expression.getExpressionString() + "' of "
						+ this.operation.describe() + " evaluated to null or blank; every call needs a scope");
			}
			return value.toString();
		}

		@Nullable Object payload() {
			Expression expression = this.operation.payload();
			if (expression != null) {
				return evaluate(expression, "payload");
			}
			int[] positions = this.operation.payloadArguments();
			if (positions.length == this.args.length) {
				return this.args;
			}
			Object[] payload = new Object[positions.length];
			for (int i = 0; i < positions.length; i++) {
				payload[i] = this.args[positions[i]];
			}
			return payload;
		}

		private @Nullable Object evaluate(Expression expression, String attribute) {
			try {
				return expression.getValue(context());
			}
			catch (EvaluationException ex) {
				throw new IdempotencyKeyException(
						"Cannot evaluate " + attribute + " expression '" + expression.getExpressionString() + "' of "
								+ this.operation.describe() + ": " + ex.getMessage(),
						ex);
			}
		}

		private EvaluationContext context() {
			if (this.context == null) {
				ArgumentsEvaluationContext context = new ArgumentsEvaluationContext(this.target,
						this.operation.variables(), this.args);
				if (IdempotentInterceptor.this.beanResolver != null) {
					context.setBeanResolver(IdempotentInterceptor.this.beanResolver);
				}
				this.context = context;
			}
			return this.context;
		}

	}

}
