package io.github.idempotent.aop;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;
import java.util.stream.IntStream;

import org.jspecify.annotations.Nullable;

import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.MethodParameter;
import org.springframework.core.MethodClassKey;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.core.ResolvableType;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.annotation.MergedAnnotations.SearchStrategy;
import org.springframework.core.NativeDetector;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.SpelCompilerMode;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.SpelParserConfiguration;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.util.ClassUtils;
import org.springframework.util.StringUtils;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.core.DuplicateHandling;
import io.github.idempotent.core.IdempotencyDefaults;
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
			"java.io.", "java.util.Locale", "java.util.TimeZone", "java.time.ZoneId", "kotlin.coroutines.");

	// A native image cannot define the classes the SpEL compiler generates: interpret
	// there.
	private final SpelExpressionParser parser = new SpelExpressionParser(
			new SpelParserConfiguration(NativeDetector.inNativeImage() ? SpelCompilerMode.OFF : SpelCompilerMode.MIXED,
					IdempotentOperationSource.class.getClassLoader()));

	private static final Pattern POSITIONAL = Pattern.compile("[ap]\\d+");

	private final Map<MethodClassKey, IdempotentOperation> cache = new ConcurrentHashMap<>();

	private final ParameterNameDiscoverer parameterNames;

	private final IdempotencyDefaults defaults;

	private final ResultCodec codec;

	private final @Nullable ConfigurableBeanFactory beanFactory;

	public IdempotentOperationSource(IdempotencyDefaults defaults, ResultCodec codec,
			@Nullable ConfigurableBeanFactory beanFactory) {
		this(defaults, codec, beanFactory, new DefaultParameterNameDiscoverer());
	}

	IdempotentOperationSource(IdempotencyDefaults defaults, ResultCodec codec,
			@Nullable ConfigurableBeanFactory beanFactory, ParameterNameDiscoverer parameterNames) {
		this.parameterNames = parameterNames;
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
			Class<?> owner = (targetClass != null) ? targetClass : specific.getDeclaringClass();
			operation = this.cache.computeIfAbsent(cacheKey, (k) -> parse(specific, owner, annotation));
		}
		return operation;
	}

	/**
	 * Names of the operations parsed so far: every {@code @Idempotent} method of the
	 * beans created so far (each bean's methods are parsed when it is created).
	 */
	public Set<String> operationNames() {
		Set<String> names = new TreeSet<>();
		for (IdempotentOperation operation : this.cache.values()) {
			names.add(operation.policy().name());
		}
		return names;
	}

	/**
	 * The operations parsed so far.
	 */
	Collection<IdempotentOperation> parsed() {
		return this.cache.values();
	}

	/**
	 * Parses every annotated method of the class, failing on the first one that is
	 * malformed or that the proxy cannot intercept. Synthetic methods are not the user's:
	 * the Kotlin compiler copies the annotations of an open {@code suspend} function onto
	 * a static {@code name$suspendImpl} that holds its body, while the function itself
	 * stays interceptable; a bridge method stands for a method that is parsed in its own
	 * right.
	 */
	void parseAll(Class<?> targetClass) {
		for (Class<?> type = targetClass; type != null && type != Object.class; type = type.getSuperclass()) {
			for (Method method : type.getDeclaredMethods()) {
				if (!method.isSynthetic() && AnnotatedElementUtils.hasAnnotation(method, Idempotent.class)) {
					checkInterceptable(method);
				}
			}
		}
		for (Method method : targetClass.getMethods()) {
			get(method, targetClass);
		}
		for (Method method : targetClass.getDeclaredMethods()) {
			if (!method.isSynthetic()) {
				get(method, targetClass);
			}
		}
	}

	private IdempotentOperation parse(Method method, Class<?> targetClass, Idempotent annotation) {
		String where = defaultName(method, targetClass);
		String name = StringUtils.hasText(annotation.name()) ? resolve(annotation.name()) : where;
		Duration ttl = duration(where, "ttl", annotation.ttl(), this.defaults.ttl());
		Duration lease = duration(where, "lease", annotation.lease(), this.defaults.lease());
		boolean unretried = isUnretried(method, targetClass);
		Duration waitFor = duration(where, "waitFor", annotation.waitFor(),
				unretried ? this.defaults.inProcessWaitFor(lease) : this.defaults.waitFor());
		Duration retryAfter = duration(where, "retryAfter", annotation.retryAfter(), this.defaults.retryAfter());
		Duration maxDuration = duration(where, "maxDuration", annotation.maxDuration(),
				this.defaults.maxDuration(lease));
		for (Class<? extends Throwable> type : annotation.cacheFor()) {
			if (!IdempotencyExecutor.isRecreatable(type)) {
				throw new IllegalStateException("@Idempotent on " + where + ": cacheFor type " + type.getName()
						+ " needs a constructor taking a String message, or none, to be replayed");
			}
		}
		// Resolved against the bean's class: Base<T>.make() on OrderService extends
		// Base<Order> returns an Order, not the erasure of T.
		ResolvableType returnType = ResolvableType.forMethodReturnType(method, targetClass);
		IdempotentOperation.Kind kind = kind(where, method, returnType);
		ResolvableType valueType = valueType(method, targetClass, returnType, kind);
		checkValueType(where, valueType);
		ResultCodec.Binding binding = this.codec.bind(valueType);
		checkDuplicateHandling(where, method, kind, annotation.onDuplicate());
		IdempotencyPolicy policy;
		try {
			policy = new IdempotencyPolicy(name, ttl, lease, waitFor, retryAfter, Arrays.asList(annotation.cacheFor()),
					binding, maxDuration, annotation.onDuplicate());
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalStateException("@Idempotent on " + where + ": " + ex.getMessage(), ex);
		}
		Expression key = expression(where, "key", annotation.key());
		Expression payload = expression(where, "payload", annotation.payload());
		Expression scope = expression(where, "scope", annotation.scope());
		String[] names = this.parameterNames.getParameterNames(method);
		if (names == null && method.getParameterCount() > 0) {
			checkNoParameterNames(where, "key", key);
			checkNoParameterNames(where, "payload", payload);
			checkNoParameterNames(where, "scope", scope);
		}
		return new IdempotentOperation(method, policy, key, payload, scope, annotation.required(),
				payloadArguments(method), ArgumentsEvaluationContext.Variables.of(method, this.parameterNames), kind,
				unretried);
	}

	/**
	 * Marks a web handler method, directly or through {@code @PostMapping} and the other
	 * shortcuts, on the method or on the interface method it implements. Matched by name,
	 * so that no web library is needed.
	 */
	private static final String REQUEST_MAPPING = "org.springframework.web.bind.annotation.RequestMapping";

	/**
	 * Refuses the duplicate handling a method cannot honour. An HTTP handler's client
	 * retries because it lost the response, and the contract is that it gets that
	 * response again: {@code SKIP} would answer an empty success it cannot tell from the
	 * real one, {@code FLAG} a second, different response, and neither could be marked as
	 * a replay. Refused rather than warned about, since either one quietly breaks what
	 * the client relies on; a handler that answers duplicates itself calls a service
	 * method that has {@code FLAG}. {@code SKIP} on a method that returns a primitive
	 * would fail on every duplicate, as {@code null} cannot be returned; on one that
	 * returns {@code Optional} it would break the caller, which never expects
	 * {@code null}.
	 */
	private static void checkDuplicateHandling(String where, Method method, IdempotentOperation.Kind kind,
			DuplicateHandling onDuplicate) {
		if (onDuplicate == DuplicateHandling.REPLAY) {
			return;
		}
		if (MergedAnnotations.from(method, SearchStrategy.TYPE_HIERARCHY).isPresent(REQUEST_MAPPING)) {
			throw new IllegalStateException("@Idempotent on " + where + ": onDuplicate = " + onDuplicate
					+ " is not allowed on an HTTP handler method: its client retries because it lost the response, "
					+ "and must get that response again (REPLAY, the default). To answer duplicates yourself, put "
					+ "@Idempotent(onDuplicate = FLAG) on a service method the handler calls");
		}
		Class<?> returnType = method.getReturnType();
		if (onDuplicate == DuplicateHandling.SKIP && kind == IdempotentOperation.Kind.VALUE && returnType.isPrimitive()
				&& returnType != void.class) {
			throw new IllegalStateException("@Idempotent on " + where + ": onDuplicate = SKIP returns null for a "
					+ "duplicate, which a method returning " + returnType.getName() + " cannot return. Return void "
					+ "or a wrapper type (" + ClassUtils.resolvePrimitiveIfNecessary(returnType).getSimpleName()
					+ "), or use REPLAY or FLAG");
		}
		if (onDuplicate == DuplicateHandling.SKIP && kind == IdempotentOperation.Kind.VALUE
				&& returnType == java.util.Optional.class) {
			throw new IllegalStateException("@Idempotent on " + where + ": onDuplicate = SKIP returns null for a "
					+ "duplicate, which a caller of a method returning Optional does not expect. Return void or a "
					+ "nullable type, or use REPLAY or FLAG");
		}
	}

	/**
	 * Annotations of methods whose calls nobody retries or redelivers: Spring calls an
	 * {@code @Async} method on another thread and a failure goes to its uncaught
	 * exception handler; an event listener's failure goes back to the publisher (after a
	 * commit, to the transaction's log) and the event is gone; a scheduled job's failure
	 * goes to its error handler. Meta-annotations count, so
	 * {@code @TransactionalEventListener} and Spring Modulith's
	 * {@code @ApplicationModuleListener} are listeners too. Matched by name, so that none
	 * of these is needed on the class path.
	 */
	private static final List<String> UNRETRIED_METHOD_ANNOTATIONS = List.of(
			"org.springframework.scheduling.annotation.Async", "org.springframework.context.event.EventListener",
			"org.springframework.scheduling.annotation.Scheduled",
			"org.springframework.scheduling.annotation.Schedules");

	/**
	 * Whether nobody retries a call of the method that is refused as in progress: it is
	 * annotated {@code @Async} (itself or its class), {@code @EventListener} (or an
	 * annotation meta-annotated with it) or {@code @Scheduled}. A {@code @RabbitListener}
	 * or {@code @KafkaListener} is not: its broker redelivers.
	 */
	static boolean isUnretried(Method method, Class<?> targetClass) {
		for (String annotation : UNRETRIED_METHOD_ANNOTATIONS) {
			if (AnnotatedElementUtils.isAnnotated(method, annotation)) {
				return true;
			}
		}
		String async = UNRETRIED_METHOD_ANNOTATIONS.get(0);
		return AnnotatedElementUtils.isAnnotated(targetClass, async)
				|| AnnotatedElementUtils.isAnnotated(method.getDeclaringClass(), async);
	}

	/**
	 * Name of an operation whose annotation gives none: the bean's class and the method's
	 * signature, fully qualified, so that no two methods share records:
	 * {@code com.shop.a.Svc#run(java.lang.String)}. The bean's class rather than the
	 * method's declaring class, so that two beans inheriting one method stay apart.
	 */
	static String defaultName(Method method, Class<?> targetClass) {
		StringBuilder name = new StringBuilder(targetClass.getName()).append('#').append(method.getName()).append('(');
		Class<?>[] types = method.getParameterTypes();
		for (int i = 0; i < types.length; i++) {
			name.append((i > 0) ? "," : "").append(types[i].getTypeName());
		}
		return name.append(')').toString();
	}

	/**
	 * A method the class-based proxy cannot intercept would run unprotected on every
	 * call: refuse it at start-up instead.
	 */
	private static void checkInterceptable(Method method) {
		int modifiers = method.getModifiers();
		String problem = Modifier.isPrivate(modifiers) ? "private"
				: Modifier.isStatic(modifiers) ? "static" : Modifier.isFinal(modifiers) ? "final" : null;
		if (problem != null) {
			throw new IllegalStateException("@Idempotent on " + method.getDeclaringClass().getName() + "#"
					+ method.getName() + " has no effect: the method is " + problem
					+ ", so Spring's proxy cannot intercept it and every call would run unprotected. "
					+ "Make it a public (or protected, or package-private), non-static, non-final method");
		}
	}

	/**
	 * Return types whose value is not the result and that are not supported: it arrives
	 * later as a stream (Flux, Kotlin Flow, SSE emitters, streaming bodies) or through a
	 * handle whose completion cannot be observed (a plain {@code Future}, Spring MVC's
	 * deferred results). Storing such an object would store its state, not its result,
	 * and a replay would never complete; they are refused at start-up.
	 * {@code CompletableFuture}, {@code CompletionStage}, {@code Mono} and Kotlin
	 * {@code suspend} functions are supported, see {@link IdempotentOperation.Kind}.
	 */
	private static final List<String> UNSUPPORTED_RETURN_TYPES = List.of("java.util.concurrent.Future",
			"java.util.concurrent.CompletionStage", "java.util.concurrent.Callable", "java.util.stream.BaseStream",
			"org.reactivestreams.Publisher", "java.util.concurrent.Flow$Publisher",
			"org.springframework.web.context.request.async.DeferredResult",
			"org.springframework.web.context.request.async.WebAsyncTask",
			"org.springframework.web.servlet.mvc.method.annotation.ResponseBodyEmitter",
			"org.springframework.web.servlet.mvc.method.annotation.StreamingResponseBody",
			"org.springframework.core.io.Resource", "java.io.InputStream", "kotlinx.coroutines.flow.Flow");

	private static final String MONO = "reactor.core.publisher.Mono";

	private static IdempotentOperation.Kind kind(String where, Method method, ResolvableType returnType) {
		if (isSuspending(method)) {
			return IdempotentOperation.Kind.MONO;
		}
		Class<?> raw = returnType.toClass();
		if (raw == CompletableFuture.class || raw == CompletionStage.class) {
			return IdempotentOperation.Kind.FUTURE;
		}
		if (raw.getName().equals(MONO)) {
			return IdempotentOperation.Kind.MONO;
		}
		checkValueType(where, returnType);
		return IdempotentOperation.Kind.VALUE;
	}

	private static boolean isSuspending(Method method) {
		Class<?>[] parameters = method.getParameterTypes();
		return parameters.length > 0
				&& "kotlin.coroutines.Continuation".equals(parameters[parameters.length - 1].getName());
	}

	/**
	 * The type of the result that is stored: {@code T} of {@code CompletableFuture<T>} or
	 * {@code Mono<T>}, the declared return type of a {@code suspend} function
	 * ({@code Unit} stores nothing), else the return type itself.
	 */
	private static ResolvableType valueType(Method method, Class<?> targetClass, ResolvableType returnType,
			IdempotentOperation.Kind kind) {
		if (kind == IdempotentOperation.Kind.VALUE) {
			return returnType;
		}
		if (isSuspending(method)) {
			// Kotlin's declared return type, read by Spring through kotlin-reflect. (Not
			// forMethodParameter(parameter, targetClass): its Type argument replaces the
			// parameter's type instead of resolving it in the bean's class.)
			ResolvableType declared = ResolvableType
				.forMethodParameter(new MethodParameter(method, -1).withContainingClass(targetClass));
			Class<?> raw = declared.resolve();
			return (raw == null || "kotlin.Unit".equals(raw.getName())) ? ResolvableType.forClass(Void.class)
					: declared;
		}
		ResolvableType value = returnType.getGeneric(0);
		return (value.resolve() != null) ? value : ResolvableType.forClass(Object.class);
	}

	private static void checkValueType(String where, ResolvableType returnType) {
		ResolvableType valueType = returnType;
		if ("org.springframework.http.ResponseEntity".equals(returnType.toClass().getName())
				|| "org.springframework.http.HttpEntity".equals(returnType.toClass().getName())) {
			valueType = returnType.getGeneric(0);
		}
		for (ResolvableType type : List.of(returnType, valueType)) {
			for (String name : UNSUPPORTED_RETURN_TYPES) {
				if (isA(type.toClass(), name)) {
					throw unsupported(where, type.toString());
				}
			}
		}
	}

	private static IllegalStateException unsupported(String where, String what) {
		return new IllegalStateException("@Idempotent on " + where + " cannot protect a method that returns " + what
				+ ": its result arrives as a stream or through a handle whose completion cannot be observed, and "
				+ "storing the returned object would not store it. Return the value itself, a CompletableFuture, "
				+ "a CompletionStage or a Mono of it (collect a Flux with collectList()), "
				+ "or put @Idempotent on a method that does");
	}

	static boolean isA(@Nullable Class<?> type, String name) {
		if (type == null || type == Object.class) {
			return false;
		}
		if (type.getName().equals(name)) {
			return true;
		}
		for (Class<?> implemented : type.getInterfaces()) {
			if (isA(implemented, name)) {
				return true;
			}
		}
		return isA(type.getSuperclass(), name);
	}

	/**
	 * The envelope of a message, never fingerprinted: it differs between two deliveries
	 * of one message (delivery tag, offset, {@code redelivered} flag, a channel or
	 * consumer). Matched by class name so that no messaging library is needed.
	 */
	private static final List<String> ENVELOPE_TYPES = List.of("com.rabbitmq.client.Channel",
			"org.springframework.amqp.core.MessageProperties", "org.springframework.messaging.MessageHeaders",
			"org.springframework.kafka.support.Acknowledgment", "org.apache.kafka.clients.consumer.Consumer",
			"org.springframework.kafka.listener.adapter.ConsumerRecordMetadata",
			"org.apache.kafka.common.header.Headers");

	/**
	 * Parameters bound to message headers ({@code @Header}, {@code @Headers}) are part of
	 * the envelope too: name a header in the key or payload expression to use it.
	 */
	private static final List<String> ENVELOPE_ANNOTATIONS = List.of(
			"org.springframework.messaging.handler.annotation.Header",
			"org.springframework.messaging.handler.annotation.Headers");

	private static int[] payloadArguments(Method method) {
		Class<?>[] types = method.getParameterTypes();
		java.lang.annotation.Annotation[][] annotations = method.getParameterAnnotations();
		return IntStream.range(0, types.length)
			.filter((i) -> !isFrameworkType(types[i]) && !isEnvelope(types[i], annotations[i]))
			.toArray();
	}

	private static boolean isEnvelope(Class<?> type, java.lang.annotation.Annotation[] annotations) {
		for (java.lang.annotation.Annotation annotation : annotations) {
			if (ENVELOPE_ANNOTATIONS.contains(annotation.annotationType().getName())) {
				return true;
			}
		}
		for (String name : ENVELOPE_TYPES) {
			if (isA(type, name)) {
				return true;
			}
		}
		return false;
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

	/**
	 * Without {@code -parameters} the compiler keeps no parameter names, and
	 * {@code #request} would evaluate to {@code null} on every call: a 400 for every
	 * request, or, with {@code required = false}, every call unprotected.
	 */
	private static void checkNoParameterNames(String where, String attribute, @Nullable Expression expression) {
		if (expression instanceof SpelExpression spel) {
			String name = namedVariable(spel.getAST());
			if (name != null) {
				throw new IllegalStateException("@Idempotent on " + where + ": " + attribute + " expression '"
						+ expression.getExpressionString() + "' refers to the parameter #" + name
						+ ", but the class was compiled without parameter names. Compile with -parameters "
						+ "(maven-compiler-plugin <parameters>true</parameters>, as Spring Boot's parent POM does) "
						+ "or refer to the argument by position: #p0, #a0");
			}
		}
	}

	private static @Nullable String namedVariable(SpelNode node) {
		if (node instanceof VariableReference) {
			String name = node.toStringAST().substring(1);
			if (!POSITIONAL.matcher(name).matches() && !name.equals("root") && !name.equals("this")) {
				return name;
			}
		}
		for (int i = 0; i < node.getChildCount(); i++) {
			String name = namedVariable(node.getChild(i));
			if (name != null) {
				return name;
			}
		}
		return null;
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

}
