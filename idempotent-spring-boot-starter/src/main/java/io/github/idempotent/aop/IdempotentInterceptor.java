package io.github.idempotent.aop;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;

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
import io.github.idempotent.core.IdempotencyPayloadException;
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

	/**
	 * Longest scope: a principal name or a tenant id, never a payload.
	 */
	private static final int MAX_SCOPE_LENGTH = 1024;

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
				throw missingKey(operation);
			}
			return invocation.proceed();
		}
		validate(operation, "key", key, this.maxKeyLength);
		String scope = call.scope();
		validate(operation, "scope", scope, MAX_SCOPE_LENGTH);
		IdempotencyKey storeKey = IdempotencyKey.of(this.keyPrefix, scope, operation.policy().name(), key,
				this.executor.getStore().maxKeyLength());
		Fingerprint fingerprint = fingerprint(operation, call.payload());
		return this.executor.execute(operation.policy(), key, storeKey, fingerprint, invocation::proceed);
	}

	/**
	 * An argument the mapper cannot write fails every call the same way: reported as
	 * {@link IdempotencyPayloadException}, which message listeners treat as not
	 * retryable, instead of a mapper error that a broker would redeliver forever.
	 */
	private Fingerprint fingerprint(IdempotentOperation operation, @Nullable Object payload) {
		try {
			return this.fingerprinter.fingerprint(payload);
		}
		catch (JacksonException ex) {
			throw new IdempotencyPayloadException("Cannot fingerprint the payload of " + operation.describe() + ": "
					+ ex.getOriginalMessage() + ". Name what identifies the request with @Idempotent(payload = "
					+ "\"#event\"), or keep arguments the JSON mapper cannot write out of the method", ex);
		}
	}

	private IdempotencyKeyException missingKey(IdempotentOperation operation) {
		if (operation.key() == null) {
			return new IdempotencyKeyException(
					"Idempotency key is required: send it in " + this.keyResolver.describeSource());
		}
		return new IdempotencyKeyException(
				"Idempotency key is required: the request field it is taken from is " + "missing or blank",
				"Idempotency key is required by " + operation.policy().name() + ": expression '"
						+ operation.key().getExpressionString() + "' of " + operation.describe()
						+ " evaluated to null or blank");
	}

	/**
	 * Checks a key or scope before it reaches the store, so that a store never sees a
	 * value it cannot keep apart from another (Redis writes a lone surrogate as '?') and
	 * a malformed value is the caller's 400, not a store failure (which would be a 503,
	 * or an unprotected run under {@code failure-mode=open}). Validated values are also
	 * safe to log.
	 */
	static void validate(IdempotentOperation operation, String what, String value, int maxLength) {
		if (value.length() > maxLength) {
			throw new IdempotencyKeyException(
					"Idempotency " + what + " is " + value.length() + " characters, longer than the " + maxLength
							+ " allowed; send a shorter key, such as a UUID",
					"Idempotency " + what + " of " + operation.policy().name() + " is " + value.length()
							+ " characters, longer than " + maxLength
							+ " (idempotent.max-key-length for keys); send a shorter key, such as a UUID");
		}
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			boolean bad;
			if (Character.isHighSurrogate(c)) {
				bad = i + 1 >= value.length() || !Character.isLowSurrogate(value.charAt(i + 1));
				i++;
			}
			else {
				bad = Character.isLowSurrogate(c) || Character.isISOControl(c);
			}
			if (bad) {
				throw new IdempotencyKeyException(
						"Idempotency " + what + " must be printable text; character " + (i + 1)
								+ " is a control character or a broken surrogate pair. Send a key such as a UUID",
						"Idempotency " + what + " of " + operation.policy().name() + " has a control character or "
								+ "a broken surrogate pair at position " + (i + 1));
			}
		}
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
				throw new IdempotencyKeyException(
						"The request has no scope for its idempotency key: the request field it is taken from is "
								+ "missing or blank",
						"Scope expression '" + expression.getExpressionString() + "' of " + this.operation.describe()
								+ " evaluated to null or blank; every call needs a scope");
			}
			return value.toString();
		}

		@Nullable Object payload() {
			Expression expression = this.operation.payload();
			if (expression != null) {
				return evaluate(expression, "payload");
			}
			int[] positions = this.operation.payloadArguments();
			if (positions.length == this.args.length && !MessagePayloads.anyMessage(this.args)) {
				return this.args;
			}
			Object[] payload = new Object[positions.length];
			for (int i = 0; i < positions.length; i++) {
				payload[i] = MessagePayloads.payloadOf(this.args[positions[i]]);
			}
			return payload;
		}

		private @Nullable Object evaluate(Expression expression, String attribute) {
			try {
				return expression.getValue(context());
			}
			catch (EvaluationException ex) {
				// The expression does not fit the arguments: a bug of the application,
				// not
				// of the request, so a server error (500) rather than a 400.
				throw new IllegalStateException(
						"Cannot evaluate " + attribute + " expression '" + expression.getExpressionString() + "' of "
								+ this.operation.describe() + ": " + ex.getMessage(),
						ex);
			}
		}

		private EvaluationContext context() {
			if (this.context == null) {
				ArgumentsEvaluationContext context = new ArgumentsEvaluationContext(this.target,
						this.operation.variables(), this.args, IdempotentInterceptor.this.keyResolver::resolveVariable);
				if (IdempotentInterceptor.this.beanResolver != null) {
					context.setBeanResolver(IdempotentInterceptor.this.beanResolver);
				}
				this.context = context;
			}
			return this.context;
		}

	}

}
