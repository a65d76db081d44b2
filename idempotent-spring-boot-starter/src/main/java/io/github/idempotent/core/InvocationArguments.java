package io.github.idempotent.core;

import java.lang.reflect.Method;
import java.util.HashMap;
import java.util.Map;

import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;

import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.EvaluationException;
import org.springframework.expression.Expression;
import org.springframework.expression.spel.support.StandardEvaluationContext;
import org.springframework.util.StringUtils;

import io.github.idempotent.core.IdempotencyExecutor.ResponseCapture;
import io.github.idempotent.store.Fingerprint;

/**
 * The key, scope and payload of one call, evaluated against its arguments. A handler's
 * fingerprint and capture come with its request's {@link HandlerCall}.
 */
final class InvocationArguments {

	private final IdempotentOperation operation;

	private final Object[] args;

	private final @Nullable Object target;

	private final IdempotencyKeyResolver keyResolver;

	private final IdempotencyScopeResolver scopeResolver;

	private final BeanFactoryResolver beanResolver;

	private final @Nullable HandlerCall handlerCall;

	private @Nullable EvaluationContext context;

	InvocationArguments(IdempotentOperation operation, MethodInvocation invocation, IdempotencyKeyResolver keyResolver,
			IdempotencyScopeResolver scopeResolver, BeanFactoryResolver beanResolver,
			@Nullable HandlerCall handlerCall) {
		this.operation = operation;
		this.args = invocation.getArguments();
		this.target = invocation.getThis();
		this.keyResolver = keyResolver;
		this.scopeResolver = scopeResolver;
		this.beanResolver = beanResolver;
		this.handlerCall = handlerCall;
	}

	static InvocationArguments ofHandler(IdempotentOperation operation, MethodInvocation invocation,
			HandlerCall handlerCall, BeanFactoryResolver beanResolver) {
		return new InvocationArguments(operation, invocation, handlerCall::headerKey, handlerCall::scope, beanResolver,
				handlerCall);
	}

	// #p0, #a0 and, when compiled with them, the parameter names.
	static Map<String, Integer> variables(Method method, @Nullable String[] names) {
		Map<String, Integer> indexes = new HashMap<>();
		for (int i = 0; i < method.getParameterCount(); i++) {
			indexes.put("a" + i, i);
			indexes.put("p" + i, i);
		}
		for (int i = 0; names != null && i < names.length; i++) {
			if (names[i] != null) {
				indexes.put(names[i], i);
			}
		}
		return Map.copyOf(indexes);
	}

	// Null to run the call unguarded; refused when the annotation requires a key.
	@Nullable String key() {
		Expression expression = this.operation.key();
		// A message's id keys its listener method, never a method the listener calls.
		boolean fromContext = this.operation.messageListener() || !this.keyResolver.isCallerless();
		Object value = (expression != null) ? evaluate(expression, "key")
				: fromContext ? this.keyResolver.resolveKey() : null;
		String key = (value != null) ? value.toString() : null;
		if (StringUtils.hasText(key)) {
			return key;
		}
		if (!this.operation.required()) {
			return null;
		}
		if (expression == null) {
			String source = this.operation.handler() ? "its key header"
					: fromContext ? this.keyResolver.describeSource() : "a key expression on the annotation";
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
				if (handlesMessage()) {
					return IdempotencyScopeResolver.GLOBAL;
				}
				throw ex;
			}
		}
		Object value = evaluate(expression, "scope");
		if (value == null || !StringUtils.hasText(value.toString())) {
			throw new IdempotencyKeyException(
					"The request has no scope for its idempotency key: the request "
							+ "field it is taken from is missing or blank",
					"Scope expression '" + expression.getExpressionString() + "' of " + this.operation.describe()
							+ " evaluated to null or blank; every call needs a scope");
		}
		return value.toString();
	}

	// A listener method's call, its message in hand, is no one's: the global scope. A
	// method the listener calls finds its own caller, and fails without one.
	boolean handlesMessage() {
		return this.operation.messageListener() && this.keyResolver.isCallerless();
	}

	@Nullable Object payload() {
		Expression expression = this.operation.payload();
		if (expression != null) {
			return evaluate(expression, "payload");
		}
		int[] positions = this.operation.payloadArguments();
		if (positions.length == this.args.length && !PayloadArguments.anyMessage(this.args)) {
			return this.args;
		}
		Object[] payload = new Object[positions.length];
		for (int i = 0; i < positions.length; i++) {
			payload[i] = PayloadArguments.payloadOf(this.args[positions[i]]);
		}
		return payload;
	}

	Fingerprint fingerprint(IdempotencyExecutor executor) {
		if (this.handlerCall != null) {
			return this.handlerCall.fingerprint();
		}
		return executor.fingerprint(payload(), this.operation.describe(),
				"Name what identifies the request with @Idempotent(payload = \"#event\"), or keep arguments the "
						+ "JSON mapper cannot write out of the method");
	}

	@Nullable ResponseCapture capture() {
		return (this.handlerCall != null) ? this.handlerCall.capture() : null;
	}

	private @Nullable Object evaluate(Expression expression, String attribute) {
		try {
			if (this.context == null) {
				this.context = new ArgumentsEvaluationContext();
			}
			return expression.getValue(this.context);
		}
		catch (EvaluationException ex) {
			// The application's bug, not the request's: a 500, not a 400.
			throw new IdempotencyExpressionException("Cannot evaluate " + attribute + " expression '"
					+ expression.getExpressionString() + "' of " + this.operation.describe() + ": " + ex.getMessage(),
					ex);
		}
	}

	// As Spring's MethodBasedEvaluationContext (#request, #p0, #a0), but with parameter
	// names resolved once per method; the key resolver's variables last (#headers).
	private final class ArgumentsEvaluationContext extends StandardEvaluationContext {

		ArgumentsEvaluationContext() {
			super(InvocationArguments.this.target);
			setBeanResolver(InvocationArguments.this.beanResolver);
		}

		@Override
		public @Nullable Object lookupVariable(String name) {
			Integer index = InvocationArguments.this.operation.variables().get(name);
			Object[] args = InvocationArguments.this.args;
			if (index != null && index < args.length) {
				return args[index];
			}
			Object value = super.lookupVariable(name);
			return (value != null) ? value : InvocationArguments.this.keyResolver.resolveVariable(name);
		}

	}

}
