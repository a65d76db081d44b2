package io.github.idempotent.core;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;

import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.MethodClassKey;
import org.springframework.core.NativeDetector;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.core.ResolvableType;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.SpelCompilerMode;
import org.springframework.expression.spel.SpelParserConfiguration;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.util.Assert;
import org.springframework.util.StringUtils;

import io.github.idempotent.annotation.Idempotent;

/** Parses and caches {@code @Idempotent} methods; a malformed one fails the start-up. */
final class IdempotentOperationSource {

	// A native image cannot define the classes the SpEL compiler generates.
	private static final SpelExpressionParser PARSER = new SpelExpressionParser(
			new SpelParserConfiguration(NativeDetector.inNativeImage() ? SpelCompilerMode.OFF : SpelCompilerMode.MIXED,
					IdempotentOperationSource.class.getClassLoader()));

	private final Map<MethodClassKey, IdempotentOperation> cache = new ConcurrentHashMap<>();

	private final Map<RouteKey, IdempotentOperation> routed = new ConcurrentHashMap<>();

	private final ParameterNameDiscoverer parameterNames;

	private final IdempotencyExecutor executor;

	// Asked at each method read: the codec's converters may need the executor.
	private final Supplier<ResultCodec> codec;

	private final @Nullable ConfigurableBeanFactory beanFactory;

	IdempotentOperationSource(IdempotencyExecutor executor, Supplier<ResultCodec> codec,
			@Nullable ConfigurableBeanFactory beanFactory) {
		this(executor, codec, beanFactory, new DefaultParameterNameDiscoverer());
	}

	IdempotentOperationSource(IdempotencyExecutor executor, Supplier<ResultCodec> codec,
			@Nullable ConfigurableBeanFactory beanFactory, ParameterNameDiscoverer parameterNames) {
		this.parameterNames = parameterNames;
		this.executor = executor;
		this.codec = codec;
		this.beanFactory = beanFactory;
	}

	/**
	 * Whether the method is an HTTP handler keyed by the request header and scoped by the
	 * caller, which the web layer guards instead of the proxy.
	 */
	static boolean isGuardedByWeb(Method method) {
		Idempotent annotation = AnnotatedElementUtils.findMergedAnnotation(method, Idempotent.class);
		return annotation != null && !StringUtils.hasText(annotation.key()) && !StringUtils.hasText(annotation.scope())
				&& OperationValidation.isHandler(method);
	}

	/** The parsed operation of a method, or {@code null} if it is not annotated. */
	@Nullable IdempotentOperation get(Method method, @Nullable Class<?> targetClass) {
		MethodClassKey cacheKey = new MethodClassKey(method, targetClass);
		IdempotentOperation operation = this.cache.get(cacheKey);
		if (operation == null) {
			Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
			Idempotent annotation = AnnotatedElementUtils.findMergedAnnotation(specific, Idempotent.class);
			if (annotation == null) {
				return null;
			}
			Class<?> owner = (targetClass != null) ? targetClass : specific.getDeclaringClass();
			operation = this.cache.computeIfAbsent(cacheKey, (k) -> parse(specific, owner, annotation));
		}
		return operation;
	}

	/** {@link IdempotencyExecutor#routedOperation}. */
	IdempotentOperation routed(Method method, Class<?> targetClass, Idempotent settings) {
		return this.routed.computeIfAbsent(new RouteKey(new MethodClassKey(method, targetClass), settings),
				(k) -> parse(method, targetClass, settings));
	}

	private record RouteKey(MethodClassKey method, Idempotent settings) {
	}

	Set<String> operationNames() {
		return Stream.concat(this.cache.values().stream(), this.routed.values().stream())
			.map((operation) -> operation.policy().name())
			.collect(Collectors.toCollection(TreeSet::new));
	}

	Collection<IdempotentOperation> parsed() {
		return this.cache.values();
	}

	/**
	 * Parses every annotated method of the class. Synthetic methods are skipped: Kotlin
	 * copies an open {@code suspend} function's annotations onto a static
	 * {@code name$suspendImpl}, and a bridge stands for a method parsed in its own right.
	 */
	void parseAll(Class<?> targetClass) {
		for (Class<?> type = targetClass; type != null && type != Object.class; type = type.getSuperclass()) {
			for (Method method : type.getDeclaredMethods()) {
				if (!method.isSynthetic() && AnnotatedElementUtils.hasAnnotation(method, Idempotent.class)
						&& !isGuardedByWeb(method)) {
					OperationValidation.checkInterceptable(method);
				}
			}
		}
		Stream
			.concat(Stream.of(targetClass.getMethods()),
					Stream.of(targetClass.getDeclaredMethods()).filter((method) -> !method.isSynthetic()))
			.forEach((method) -> get(method, targetClass));
	}

	private IdempotentOperation parse(Method method, Class<?> targetClass, Idempotent annotation) {
		String where = defaultName(method, targetClass);
		String name = StringUtils.hasText(annotation.name()) ? resolve(annotation.name()) : where;
		OperationDefaults defaults = this.executor.operationDefaults();
		Duration ttl = duration(where, "ttl", annotation.ttl(), defaults.ttl());
		Duration lease = duration(where, "lease", annotation.lease(), defaults.lease());
		boolean unretried = isUnretried(method, targetClass);
		Duration waitFor = duration(where, "waitFor", annotation.waitFor(),
				unretried ? defaults.inProcessWaitFor(lease) : defaults.waitFor());
		Duration retryAfter = duration(where, "retryAfter", annotation.retryAfter(), defaults.retryAfter());
		Duration maxDuration = duration(where, "maxDuration", annotation.maxDuration(), defaults.maxDuration(lease));
		OperationValidation.checkCacheFor(where, annotation.cacheFor());
		// Against the bean's class: Base<T>.make() on a Base<Order> returns Order.
		ResolvableType returnType = ResolvableType.forMethodReturnType(method, targetClass);
		IdempotentOperation.Kind kind = OperationValidation.kind(method, returnType);
		ResolvableType valueType = OperationValidation.valueType(method, targetClass, returnType, kind);
		OperationValidation.checkValueType(where, valueType);
		ResultCodec.Binding binding = this.codec.get().bind(valueType);
		boolean handler = OperationValidation.isHandler(method);
		OperationValidation.checkDuplicateHandling(where, method, handler, kind, annotation.onDuplicate());
		ReleasedStatuses releaseOnStatus = releaseOnStatus(where, annotation.releaseOnStatus(), handler);
		IdempotencyPolicy policy;
		try {
			policy = new IdempotencyPolicy(name, ttl, lease, waitFor, retryAfter, Arrays.asList(annotation.cacheFor()),
					binding, maxDuration, annotation.onDuplicate(), releaseOnStatus);
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalStateException("@Idempotent on " + where + ": " + ex.getMessage(), ex);
		}
		String[] names = this.parameterNames.getParameterNames(method);
		boolean unnamed = names == null && method.getParameterCount() > 0;
		Expression key = expression(where, "key", annotation.key(), unnamed);
		Expression payload = expression(where, "payload", annotation.payload(), unnamed);
		Expression scope = expression(where, "scope", annotation.scope(), unnamed);
		Assert.state(!handler || payload == null,
				() -> "@Idempotent on " + where + ": payload = \"" + annotation.payload()
						+ "\" is not allowed on an HTTP handler method, whose fingerprint is the "
						+ "request as its client sent it (method, path, query string and body). Remove payload; to "
						+ "fingerprint part of it, put @Idempotent on a service method the handler calls");
		return new IdempotentOperation(method, policy, key, payload, scope, annotation.required(),
				PayloadArguments.of(method), InvocationArguments.variables(method, names), kind, unretried, handler,
				isMessageListener(method));
	}

	/**
	 * Methods whose refused calls nobody retries or redelivers (meta-annotations count,
	 * so {@code @TransactionalEventListener} too); matched by name.
	 */
	private static final List<String> UNRETRIED_METHOD_ANNOTATIONS = List.of(
			"org.springframework.scheduling.annotation.Async", "org.springframework.context.event.EventListener",
			"org.springframework.scheduling.annotation.Scheduled",
			"org.springframework.scheduling.annotation.Schedules");

	static boolean isUnretried(Method method, Class<?> targetClass) {
		String async = UNRETRIED_METHOD_ANNOTATIONS.get(0);
		return UNRETRIED_METHOD_ANNOTATIONS.stream().anyMatch((name) -> AnnotatedElementUtils.isAnnotated(method, name))
				|| AnnotatedElementUtils.isAnnotated(targetClass, async)
				|| AnnotatedElementUtils.isAnnotated(method.getDeclaringClass(), async);
	}

	/**
	 * Methods a listener container calls, annotated on the method or its class; matched
	 * by name.
	 */
	private static final List<String> MESSAGE_LISTENERS = List.of(
			"org.springframework.amqp.rabbit.annotation.RabbitListener",
			"org.springframework.kafka.annotation.KafkaListener", "org.springframework.jms.annotation.JmsListener");

	private static boolean isMessageListener(Method method) {
		return Stream.of(method, method.getDeclaringClass())
			.map((element) -> MergedAnnotations.from(element, MergedAnnotations.SearchStrategy.TYPE_HIERARCHY))
			.anyMatch((annotations) -> MESSAGE_LISTENERS.stream().anyMatch(annotations::isPresent));
	}

	/**
	 * {@code com.shop.a.Svc#run(java.lang.String)}: the bean's class, not the declaring
	 * one, so that two beans inheriting one method keep apart records.
	 */
	static String defaultName(Method method, Class<?> targetClass) {
		return targetClass.getName() + "#" + method.getName()
				+ Arrays.stream(method.getParameterTypes())
					.map(Class::getTypeName)
					.collect(Collectors.joining(",", "(", ")"));
	}

	/**
	 * Whether {@code type} is or extends the type named {@code name}, by name so that its
	 * library need not be present.
	 */
	static boolean isA(@Nullable Class<?> type, String name) {
		return type != null && type != Object.class
				&& (type.getName().equals(name)
						|| Stream.of(type.getInterfaces()).anyMatch((implemented) -> isA(implemented, name))
						|| isA(type.getSuperclass(), name));
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

	private ReleasedStatuses releaseOnStatus(String where, String[] values, boolean handler) {
		if (values.length == 0) {
			return this.executor.operationDefaults().releaseOnStatus();
		}
		Assert.state(handler, () -> "@Idempotent on " + where + ": releaseOnStatus applies to the response of an "
				+ "HTTP handler method (@RequestMapping), and this method is none. Remove it; an exception releases "
				+ "the key unless cacheFor lists its type");
		List<String> resolved = Arrays.stream(values).map(this::resolve).toList();
		try {
			return ReleasedStatuses.of(resolved);
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalStateException(
					"@Idempotent on " + where + ": releaseOnStatus " + resolved + ": " + ex.getMessage(), ex);
		}
	}

	private static @Nullable Expression expression(String where, String attribute, String text, boolean unnamed) {
		if (!StringUtils.hasText(text)) {
			return null;
		}
		try {
			Expression expression = PARSER.parseExpression(text);
			OperationValidation.checkNoParameterNames(where, attribute, expression, unnamed);
			return expression;
		}
		catch (ParseException ex) {
			throw new IllegalStateException("@Idempotent on " + where + ": " + attribute + " expression '" + text
					+ "' does not parse: " + ex.getMessage() + ". Refer to arguments by name (#request.orderNo) "
					+ "or position (#p0)", ex);
		}
	}

	private String resolve(String text) {
		String resolved = (this.beanFactory != null) ? this.beanFactory.resolveEmbeddedValue(text) : null;
		return (resolved != null) ? resolved : text;
	}

}
