package io.github.idempotent.aop;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.IntStream;

import org.jspecify.annotations.Nullable;

import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.MethodClassKey;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.core.ResolvableType;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.SpelCompilerMode;
import org.springframework.expression.spel.SpelParserConfiguration;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.util.StringUtils;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.core.IdempotencyExecutor;
import io.github.idempotent.core.IdempotencyPolicy;
import io.github.idempotent.core.ResultCodec;

/**
 * Parses {@code @Idempotent} methods once and caches the parsed form per method and
 * target class, as Spring's own annotation sources do. A malformed expression or duration
 * fails at start-up with a message that names the method.
 */
public class IdempotentOperationSource {

	/**
	 * Arguments never fingerprinted by default: they differ per request without being
	 * part of the payload.
	 */
	private static final List<String> FRAMEWORK_TYPE_PREFIXES = List.of("jakarta.servlet.",
			"org.springframework.validation.", "org.springframework.ui.", "org.springframework.web.",
			"org.springframework.http.HttpHeaders", "org.springframework.security.", "java.security.Principal",
			"java.io.", "java.util.Locale", "java.util.TimeZone", "java.time.ZoneId");

	private final SpelExpressionParser parser = new SpelExpressionParser(
			new SpelParserConfiguration(SpelCompilerMode.MIXED, IdempotentOperationSource.class.getClassLoader()));

	private final Map<MethodClassKey, IdempotentOperation> cache = new ConcurrentHashMap<>();

	private final ParameterNameDiscoverer parameterNames = new DefaultParameterNameDiscoverer();

	private final Defaults defaults;

	private final ResultCodec codec;

	private final @Nullable ConfigurableBeanFactory beanFactory;

	public IdempotentOperationSource(Defaults defaults, ResultCodec codec,
			@Nullable ConfigurableBeanFactory beanFactory) {
		this.defaults = defaults;
		this.codec = codec;
		this.beanFactory = beanFactory;
	}

	/**
	 * The parsed operation of a method, or {@code null} if it is not annotated.
	 */
	public @Nullable IdempotentOperation get(Method method, @Nullable Class<?> targetClass) {
		MethodClassKey cacheKey = new MethodClassKey(method, targetClass);
		IdempotentOperation operation = this.cache.get(cacheKey);
		if (operation == null) {
			Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
			Idempotent annotation = AnnotatedElementUtils.findMergedAnnotation(specific, Idempotent.class);
			if (annotation == null) {
				return null;
			}
			operation = this.cache.computeIfAbsent(cacheKey, (k) -> parse(specific, annotation));
		}
		return operation;
	}

	/**
	 * Parses every annotated method of the class, failing on the first one that is
	 * malformed.
	 */
	void parseAll(Class<?> targetClass) {
		for (Method method : targetClass.getMethods()) {
			get(method, targetClass);
		}
		for (Method method : targetClass.getDeclaredMethods()) {
			get(method, targetClass);
		}
	}

	private IdempotentOperation parse(Method method, Idempotent annotation) {
		String where = method.getDeclaringClass().getSimpleName() + "#" + method.getName();
		String name = StringUtils.hasText(annotation.name()) ? resolve(annotation.name()) : where;
		Duration ttl = duration(where, "ttl", annotation.ttl(), this.defaults.ttl());
		Duration lease = duration(where, "lease", annotation.lease(), this.defaults.lease());
		Duration waitFor = duration(where, "waitFor", annotation.waitFor(), this.defaults.waitFor());
		Duration retryAfter = duration(where, "retryAfter", annotation.retryAfter(), this.defaults.retryAfter());
		for (Class<? extends Throwable> type : annotation.cacheFor()) {
			if (!IdempotencyExecutor.isRecreatable(type)) {
				throw new IllegalStateException("@Idempotent on " + where + ": cacheFor type " + type.getName()
						+ " needs a constructor taking a String message, or none, to be replayed");
			}
		}
		ResultCodec.Binding binding = this.codec.bind(ResolvableType.forMethodReturnType(method));
		IdempotencyPolicy policy;
		try {
			policy = new IdempotencyPolicy(name, ttl, lease, waitFor, retryAfter, Arrays.asList(annotation.cacheFor()),
					binding);
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalStateException("@Idempotent on " + where + ": " + ex.getMessage(), ex);
		}
		return new IdempotentOperation(method, policy, expression(where, "key", annotation.key()),
				expression(where, "payload", annotation.payload()), expression(where, "scope", annotation.scope()),
				annotation.required(), payloadArguments(method),
				ArgumentsEvaluationContext.Variables.of(method, this.parameterNames));
	}

	private static int[] payloadArguments(Method method) {
		Class<?>[] types = method.getParameterTypes();
		return IntStream.range(0, types.length).filter((i) -> !isFrameworkType(types[i])).toArray();
	}

	private static boolean isFrameworkType(Class<?> type) {
		String name = type.getName();
		for (String prefix : FRAMEWORK_TYPE_PREFIXES) {
			if (name.startsWith(prefix)) {
				return true;
			}
		}
		return false;
	}

	private @Nullable Expression expression(String where, String attribute, String text) {
		if (!StringUtils.hasText(text)) {
			return null;
		}
		try {
			return this.parser.parseExpression(text);
		}
		catch (ParseException ex) {
			throw new IllegalStateException("@Idempotent on " + where + ": " + attribute + " expression '" + text
					+ "' does not parse: " + ex.getMessage() + ". Refer to arguments by name (#request.orderNo) "
					+ "or position (#p0)", ex);
		}
	}

	private Duration duration(String where, String attribute, String text, Duration fallback) {
		if (!StringUtils.hasText(text)) {
			return fallback;
		}
		String resolved = resolve(text);
		try {
			return DurationStyle.detectAndParse(resolved.trim());
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalStateException("@Idempotent on " + where + ": " + attribute + " '" + text + "'"
					+ (resolved.equals(text) ? "" : " (resolved to '" + resolved + "')")
					+ " is not a duration; use a value such as \"24h\", \"30s\", \"500ms\" or \"PT30S\"", ex);
		}
	}

	private String resolve(String text) {
		if (this.beanFactory == null) {
			return text;
		}
		String resolved = this.beanFactory.resolveEmbeddedValue(text);
		return (resolved != null) ? resolved : text;
	}

	/**
	 * Settings used where the annotation leaves an attribute empty.
	 */
	public record Defaults(Duration ttl, Duration lease, Duration waitFor, Duration retryAfter) {
	}

}
