package io.github.idempotent.aop;

import org.jspecify.annotations.Nullable;

import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.EvaluationException;
import org.springframework.expression.Expression;
import org.springframework.util.StringUtils;

import io.github.idempotent.core.IdempotencyExpressionException;
import io.github.idempotent.core.IdempotencyKeyException;
import io.github.idempotent.core.IdempotencyKeyResolver;
import io.github.idempotent.core.IdempotencyScopeException;
import io.github.idempotent.core.IdempotencyScopeResolver;

/** The key, scope and payload of one call, evaluated against its arguments. */
final class InvocationArguments {

	private final IdempotentOperation operation;

	private final Object[] args;

	private final @Nullable Object target;

	private final IdempotencyKeyResolver keyResolver;

	private final IdempotencyScopeResolver scopeResolver;

	private final @Nullable BeanFactoryResolver beanResolver;

	private @Nullable EvaluationContext context;

	InvocationArguments(IdempotentOperation operation, Object[] args, @Nullable Object target,
			IdempotencyKeyResolver keyResolver, IdempotencyScopeResolver scopeResolver,
			@Nullable BeanFactoryResolver beanResolver) {
		this.operation = operation;
		this.args = args;
		this.target = target;
		this.keyResolver = keyResolver;
		this.scopeResolver = scopeResolver;
		this.beanResolver = beanResolver;
	}

	// Null to run the call unguarded; refused when the annotation requires a key.
	@Nullable String key() {
		Expression expression = this.operation.key();
		Object value = (expression != null) ? evaluate(expression, "key") : this.keyResolver.resolveKey();
		String key = (value != null) ? value.toString() : null;
		if (StringUtils.hasText(key)) {
			return key;
		}
		if (!this.operation.required()) {
			return null;
		}
		if (expression == null) {
			String source = this.operation.handler() ? "its key header" : this.keyResolver.describeSource();
			throw new IdempotencyKeyException("Idempotency key is required: send it in " + source);
		}
		throw new IdempotencyKeyException(
				"Idempotency key is required: the request field it is taken from is missing or blank",
				"Idempotency key is required by " + this.operation.policy().name() + ": expression '"
						+ expression.getExpressionString() + "' of " + this.operation.describe()
						+ " evaluated to null or blank");
	}

	String scope() {
		Expression expression = this.operation.scope();
		if (expression == null) {
			try {
				return this.scopeResolver.resolveScope();
			}
			catch (IdempotencyScopeException ex) {
				// A listener's call is no one's: its key is the message's id.
				if (this.keyResolver.isCallerless()) {
					return IdempotencyScopeResolver.GLOBAL;
				}
				throw ex;
			}
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
			// The application's bug, not the request's: a 500, not a 400.
			throw new IdempotencyExpressionException("Cannot evaluate " + attribute + " expression '"
					+ expression.getExpressionString() + "' of " + this.operation.describe() + ": " + ex.getMessage(),
					ex);
		}
	}

	private EvaluationContext context() {
		if (this.context == null) {
			ArgumentsEvaluationContext context = new ArgumentsEvaluationContext(this.target, this.operation.variables(),
					this.args, this.keyResolver::resolveVariable);
			if (this.beanResolver != null) {
				context.setBeanResolver(this.beanResolver);
			}
			this.context = context;
		}
		return this.context;
	}

}
