package io.github.idempotent.aop;

import java.lang.reflect.Method;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.spel.support.StandardEvaluationContext;

/**
 * SpEL context of one call, as Spring's {@code MethodBasedEvaluationContext}
 * ({@code #request}, {@code #p0}, {@code #a0}), but with parameter names resolved once
 * per method rather than per call.
 */
final class ArgumentsEvaluationContext extends StandardEvaluationContext {

	private final Map<String, Integer> variables;

	private final Object[] arguments;

	private final Function<String, @Nullable Object> contextVariables;

	// contextVariables are looked up last (#headers of a listener's message).
	ArgumentsEvaluationContext(@Nullable Object target, Map<String, Integer> variables, Object[] arguments,
			Function<String, @Nullable Object> contextVariables) {
		super(target);
		this.variables = variables;
		this.arguments = arguments;
		this.contextVariables = contextVariables;
	}

	@Override
	public @Nullable Object lookupVariable(String name) {
		Integer index = this.variables.get(name);
		if (index != null && index < this.arguments.length) {
			return this.arguments[index];
		}
		Object value = super.lookupVariable(name);
		return (value != null) ? value : this.contextVariables.apply(name);
	}

	// #p0, #a0 and, when compiled with them, the parameter names.
	static Map<String, Integer> variables(Method method, ParameterNameDiscoverer parameterNames) {
		Map<String, Integer> indexes = new HashMap<>();
		for (int i = 0; i < method.getParameterCount(); i++) {
			indexes.put("a" + i, i);
			indexes.put("p" + i, i);
		}
		String[] names = parameterNames.getParameterNames(method);
		for (int i = 0; names != null && i < names.length; i++) {
			if (names[i] != null) {
				indexes.put(names[i], i);
			}
		}
		return Map.copyOf(indexes);
	}

}
