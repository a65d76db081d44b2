package io.github.idempotent.web;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.context.Context;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.codec.multipart.FilePart;
import org.springframework.http.codec.multipart.Part;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.util.Assert;
import org.springframework.util.LinkedMultiValueMap;
import org.springframework.util.MultiValueMap;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.reactive.DispatchExceptionHandler;
import org.springframework.web.reactive.HandlerAdapter;
import org.springframework.web.reactive.HandlerMapping;
import org.springframework.web.reactive.HandlerResult;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerAdapter;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerMapping;
import org.springframework.web.server.ServerWebExchange;

import io.github.idempotent.core.IdempotentOperation;
import io.github.idempotent.core.IdempotencyRequestTooLargeException;
import io.github.idempotent.core.ReactiveIdempotencyScopeResolver;
import io.github.idempotent.core.IdempotencyExecutor;
import io.github.idempotent.core.IdempotencyExecutor.ResponseCapture;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;

/**
 * Guards {@code @Idempotent} handler methods (and configured routes) on WebFlux with the
 * exchange in hand, ahead of the {@link RequestMappingHandlerAdapter} it delegates to. No
 * thread carries the request: WebFlux calls a handler on whichever thread delivered its
 * last argument. A handler whose key or scope comes from its arguments returns a
 * {@code Mono}, claimed on subscription with its request in its context
 * ({@link IdempotentOperation#dispatchContext}).
 */
class IdempotentReactiveHandlerAdapter extends GuardingHandlerAdapter<RequestMappingHandlerAdapter>
		implements HandlerAdapter, DispatchExceptionHandler, SmartInitializingSingleton {

	private final ObjectProvider<RequestMappingHandlerMapping> mappings;

	private final ReactiveIdempotencyScopeResolver scopeResolver;

	IdempotentReactiveHandlerAdapter(ObjectProvider<RequestMappingHandlerAdapter> delegate,
			ObjectProvider<RequestMappingHandlerMapping> mappings, IdempotencyExecutor executor,
			ReactiveIdempotencyScopeResolver scopeResolver, WebContract contract) {
		super(delegate, executor, contract);
		Assert.isTrue(contract.maxRequestSize < Integer.MAX_VALUE, "maxRequestSize must be less than 2 GB");
		this.mappings = mappings;
		this.scopeResolver = scopeResolver;
	}

	// Without a Mono, nothing of ours runs between argument resolution and the call.
	@Override
	public void afterSingletonsInstantiated() {
		this.mappings.orderedStream().forEach((mapping) -> mapping.getHandlerMethods().values().forEach((method) -> {
			IdempotentOperation operation = this.executor.operation(method.getMethod(), method.getBeanType());
			if (operation != null && operation.needsArguments() && operation.kind() != IdempotentOperation.Kind.MONO) {
				throw new IllegalStateException("@Idempotent on " + operation.describe() + ": on WebFlux, a handler "
						+ "whose key or scope comes from its arguments must return a Mono (or be a Kotlin suspend "
						+ "function), where its request travels with it. Return Mono<...>, or take the key from the "
						+ this.contract.headers.keyHeader() + " header (leave key and scope empty)");
			}
		}));
	}

	@Override
	public Mono<HandlerResult> handle(ServerWebExchange exchange, Object handler) {
		return Mono.defer(() -> {
			HandlerMethod method = (HandlerMethod) handler;
			ServerHttpRequest request = exchange.getRequest();
			IdempotentOperation operation = this.contract.operation(this.executor, method, request.getMethod(),
					request.getPath().pathWithinApplication());
			if (operation == null) {
				return delegate().handle(exchange, handler);
			}
			RecordingServerHttpResponse recording = ResponseRecordingWebFilter.recording(exchange);
			Assert.state(recording != null,
					"@Idempotent handlers need the idempotentResponseRecordingWebFilter bean registered");
			String key = key(operation, request.getHeaders()::getOrEmpty);
			if (key == null && !operation.needsArguments()) {
				return delegate().handle(exchange, handler);
			}
			return Mono.zip(scope(operation, exchange), received(exchange, method)).flatMap((scopeAndRequest) -> {
				String scope = scopeAndRequest.getT1().orElse(null);
				Received received = scopeAndRequest.getT2();
				ResponseCapture capture = recording.hold(key);
				if (operation.needsArguments()) {
					Map<String, Object> call = operation.dispatchContext(method.getMethod(), key, scope,
							received.fingerprint(), capture);
					return delegate().handle(received.exchange(), handler)
						.map((result) -> observed(result, recording, call));
				}
				RecordKey recordKey = operation.recordKey(this.executor, scope, key);
				return Mono
					.deferContextual((context) -> IdempotencyExecutor.ReactiveCalls.execute(this.executor,
							operation.policy(), key, recordKey, received.fingerprint(),
							() -> delegate().handle(received.exchange(), handler)
								.map((result) -> observed(result, recording, null)),
							context, capture))
					.cast(HandlerResult.class);
			});
		});
	}

	// Empty when an expression names it.
	private Mono<Optional<String>> scope(IdempotentOperation operation, ServerWebExchange exchange) {
		if (operation.scope() != null) {
			return Mono.just(Optional.empty());
		}
		return Mono
			.deferContextual((context) -> this.scopeResolver
				.resolveScope(Context.of(context).put(ReactivePrincipalScopeResolver.EXCHANGE_CONTEXT_KEY, exchange)))
			.switchIfEmpty(Mono.error(() -> IdempotentOperation.noScope(this.scopeResolver,
					" for " + exchange.getRequest().getMethod() + " " + exchange.getRequest().getPath())))
			.map(Optional::of);
	}

	private Mono<Received> received(ServerWebExchange exchange, HandlerMethod method) {
		ServerHttpRequest request = exchange.getRequest();
		MediaType type = request.getHeaders().getContentType();
		if (type != null && MediaType.APPLICATION_FORM_URLENCODED.includes(type)) {
			return exchange.getFormData().map((form) -> {
				MultiValueMap<String, String> parameters = new LinkedMultiValueMap<>(request.getQueryParams());
				form.forEach(parameters::addAll);
				return new Received(fingerprint(exchange, parameters, type, new byte[0]), exchange);
			});
		}
		if (type != null && "multipart".equalsIgnoreCase(type.getType()) && !readsBody(method)) {
			// Parsed by the exchange, once, for the handler too.
			return exchange.getMultipartData()
				.flatMap(this::parts)
				.map((parts) -> new Received(fingerprint(exchange, request.getQueryParams(), type, parts), exchange));
		}
		return DataBufferUtils.join(request.getBody(), (int) this.contract.maxRequestSize)
			.map(RecordingServerHttpResponse::drain)
			.defaultIfEmpty(new byte[0])
			.onErrorMap(DataBufferLimitException.class,
					(ex) -> new IdempotencyRequestTooLargeException(this.contract.maxRequestSize))
			.map((bytes) -> new Received(fingerprint(exchange, request.getQueryParams(), type, bytes),
					exchange.mutate().request(new ServerHttpRequestDecorator(request) {

						@Override
						public Flux<DataBuffer> getBody() {
							return Flux.defer(() -> (bytes.length == 0) ? Flux.empty()
									: Flux.just(DefaultDataBufferFactory.sharedInstance.wrap(bytes)));
						}

					}).build()));
	}

	// Such a handler is given the body as sent, and its fingerprint holds the boundary.
	private static boolean readsBody(HandlerMethod method) {
		return Arrays.stream(method.getMethodParameters())
			.anyMatch((parameter) -> parameter.hasParameterAnnotation(RequestBody.class)
					|| HttpEntity.class.isAssignableFrom(parameter.getParameterType()));
	}

	private Mono<byte[]> parts(MultiValueMap<String, Part> parts) {
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		long[] size = { 0 };
		return Flux.fromIterable(new TreeMap<>(parts).values())
			.concatMapIterable(Function.identity())
			.concatMap((part) -> {
				ByteArrayOutputStream content = new ByteArrayOutputStream();
				return part.content().doOnNext((buffer) -> {
					try {
						int length = buffer.readableByteCount();
						size[0] += length;
						if (size[0] > this.contract.maxRequestSize) {
							throw new IdempotencyRequestTooLargeException(this.contract.maxRequestSize);
						}
						// Copied, not read: a part held in memory hands the handler this
						// buffer.
						byte[] bytes = new byte[length];
						buffer.toByteBuffer(buffer.readPosition(), ByteBuffer.wrap(bytes), 0, length);
						content.writeBytes(bytes);
					}
					finally {
						DataBufferUtils.release(buffer);
					}
				}).then(Mono.fromCallable(() -> {
					RequestFingerprint.part(out, part.name(), (part instanceof FilePart file) ? file.filename() : null,
							part.headers().getFirst(HttpHeaders.CONTENT_TYPE), content.size());
					content.writeTo(out);
					return out;
				}));
			})
			.then(Mono.fromSupplier(out::toByteArray));
	}

	private Fingerprint fingerprint(ServerWebExchange exchange, MultiValueMap<String, String> parameters,
			@Nullable MediaType type, byte[] body) {
		ServerHttpRequest request = exchange.getRequest();
		return RequestFingerprint.of(this.executor, request.getMethod().name(),
				request.getPath().pathWithinApplication().value(),
				exchange.getAttribute(HandlerMapping.BEST_MATCHING_PATTERN_ATTRIBUTE), parameters, type, body);
	}

	// A failed Mono or future releases the key; call goes into the Mono's context.
	private static HandlerResult observed(HandlerResult result, RecordingServerHttpResponse recording,
			@Nullable Map<String, Object> call) {
		Object value = result.getReturnValue();
		Object observed;
		if (value instanceof CompletionStage<?> stage) {
			// Written from the stage returned, so that the failure is known by then.
			observed = stage.whenComplete((ignored, failure) -> recording.failed(failure));
		}
		else if (value instanceof Mono<?> mono) {
			Mono<?> failing = mono.doOnError(recording::failed);
			observed = (call != null) ? failing.contextWrite(Context.of(call)) : failing;
		}
		else {
			return result;
		}
		return new HandlerResult(result.getHandler(), observed, result.getReturnTypeSource(),
				result.getBindingContext())
			.setExceptionHandler(result.getExceptionHandler());
	}

	@Override
	public Mono<HandlerResult> handleError(ServerWebExchange exchange, Throwable ex) {
		return delegate().handleError(exchange, ex);
	}

	private record Received(Fingerprint fingerprint, ServerWebExchange exchange) {
	}

}
