package io.github.idempotent.web;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.reflect.UndeclaredThrowableException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;

import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.Part;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.core.Ordered;
import org.springframework.http.HttpMethod;
import org.springframework.http.MediaType;
import org.springframework.http.server.PathContainer;
import org.springframework.http.server.RequestPath;
import org.springframework.http.converter.HttpMessageNotWritableException;
import org.springframework.util.Assert;
import org.springframework.util.LinkedMultiValueMap;
import org.springframework.util.MultiValueMap;
import org.springframework.web.HttpMediaTypeNotAcceptableException;
import org.springframework.web.context.request.async.WebAsyncManager;
import org.springframework.web.context.request.async.WebAsyncUtils;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerAdapter;
import org.springframework.web.servlet.HandlerMapping;
import org.springframework.web.servlet.ModelAndView;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerAdapter;
import org.springframework.web.util.UriComponentsBuilder;
import org.springframework.web.util.ServletRequestPathUtils;
import org.springframework.web.util.UriUtils;
import org.springframework.web.util.WebUtils;

import io.github.idempotent.aop.HandlerCall;
import io.github.idempotent.aop.IdempotentOperation;
import io.github.idempotent.aop.IdempotentOperationSource;
import io.github.idempotent.core.IdempotencyKeyException;
import io.github.idempotent.core.IdempotencyObserver;
import io.github.idempotent.core.IdempotencyScopeResolver;
import io.github.idempotent.core.IdempotentCalls;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;

/**
 * Guards the calls of {@code @Idempotent} handler methods on Spring MVC, with the request
 * in hand: Spring MVC hands each request to the first handler adapter that supports its
 * handler, and this one, ordered first, supports the annotated ones and hands them on to
 * the {@link RequestMappingHandlerAdapter} once the key is claimed. The key is the
 * request's header, the scope the caller's as the request's security context names it,
 * the fingerprint the request as received ({@link RequestFingerprint}), and the response
 * is recorded as written ({@link ResponseRecordingFilter}). A replay is written without
 * calling the handler at all.
 * <p>
 * A handler method without the annotation is guarded the same way for the requests that a
 * configured route matches ({@link IdempotentRoutes}).
 * <p>
 * A handler whose key or scope comes from its arguments is claimed when it is called,
 * once its arguments are resolved: this adapter hands the rest of its inputs to that call
 * (see {@link HandlerCall}).
 */
public class IdempotentHandlerAdapter implements HandlerAdapter, Ordered {

	private final ObjectProvider<RequestMappingHandlerAdapter> delegate;

	private final IdempotentOperationSource operations;

	private final IdempotentCalls calls;

	private final IdempotencyScopeResolver scopeResolver;

	private final RequestFingerprint fingerprints;

	private final IdempotencyResponseHeaders marker;

	private final long maxRequestSize;

	private final IdempotentRoutes routes;

	/**
	 * @param delegate the adapter that calls the handler once its key is claimed
	 * @param markers the header that carries the key, and the one that marks a replay
	 * @param maxRequestSize largest body of a keyed request, in bytes
	 * @param routes the requests guarded without {@code @Idempotent}
	 */
	public IdempotentHandlerAdapter(ObjectProvider<RequestMappingHandlerAdapter> delegate,
			IdempotentOperationSource operations, IdempotentCalls calls, IdempotencyScopeResolver scopeResolver,
			IdempotencyResponseHeaders markers, long maxRequestSize, IdempotentRoutes routes) {
		Assert.isTrue(maxRequestSize > 0, "maxRequestSize must be positive");
		this.delegate = delegate;
		this.operations = operations;
		this.routes = routes;
		this.calls = calls;
		this.scopeResolver = scopeResolver;
		this.fingerprints = new RequestFingerprint(calls.fingerprinter());
		this.marker = markers;
		this.maxRequestSize = maxRequestSize;
	}

	/**
	 * Every handler method while routes are configured (which requests a route guards is
	 * known only from the request), else the annotated ones.
	 */
	@Override
	public boolean supports(Object handler) {
		return handler instanceof HandlerMethod method
				&& (!this.routes.isEmpty() || this.operations.get(method.getMethod(), method.getBeanType()) != null);
	}

	private @Nullable IdempotentOperation operation(HandlerMethod method, HttpServletRequest request) {
		PathContainer path = ServletRequestPathUtils.hasParsedRequestPath(request)
				? ServletRequestPathUtils.getParsedRequestPath(request).pathWithinApplication()
				: RequestPath.parse(request.getRequestURI(), request.getContextPath()).pathWithinApplication();
		return this.routes.operation(this.operations, method, HttpMethod.valueOf(request.getMethod()), path);
	}

	@Override
	public @Nullable ModelAndView handle(HttpServletRequest request, HttpServletResponse response, Object handler)
			throws Exception {
		HandlerMethod method = (HandlerMethod) handler;
		IdempotentOperation operation = operation(method, request);
		if (operation == null) {
			return delegate().handle(request, response, handler);
		}
		RecordingServletResponse recording = ResponseRecordingFilter.recording(request);
		Assert.state(recording != null,
				"@Idempotent handlers need the idempotentResponseRecordingFilter bean registered as a filter");
		WebAsyncManager async = WebAsyncUtils.getAsyncManager(request);
		if (async.hasConcurrentResult()) {
			// The async dispatch of a call that returned a future or a Mono.
			if (async.getConcurrentResult() instanceof Throwable failure) {
				recording.failed(failure);
			}
			return delegate().handle(request, response, handler);
		}
		String header = this.marker.keyHeader();
		String key = IdempotencyKeyHeader.parse(header,
				IdempotencyKeyHeader.lines(header, () -> Collections.list(request.getHeaders(header))));
		if (key == null && !operation.needsArguments()) {
			if (operation.required()) {
				throw new IdempotencyKeyException("Idempotency key is required: send it in the " + header + " header");
			}
			return delegate().handle(request, response, handler);
		}
		String scope = (operation.scope() != null) ? null : PrincipalScopeResolver.ofRequestInHand(this.scopeResolver);
		Fingerprint fingerprint = fingerprint(request);
		IdempotencyObserver marker = this.marker.of(response::setHeader, response::isCommitted, key != null);
		recording.hold();
		try {
			if (operation.needsArguments()) {
				HandlerCall call = new HandlerCall(method.getMethod(), key, scope, fingerprint, recording, marker);
				return HandlerCall.dispatch(call, () -> delegate().handle(request, response, handler));
			}
			return claimAndHandle(operation, key, scope, fingerprint, marker, recording, request, response, method);
		}
		catch (Exception | Error ex) {
			recording.passThrough();
			throw ex;
		}
	}

	private @Nullable ModelAndView claimAndHandle(IdempotentOperation operation, String key, String scope,
			Fingerprint fingerprint, IdempotencyObserver marker, RecordingServletResponse recording,
			HttpServletRequest request, HttpServletResponse response, HandlerMethod handler) throws Exception {
		String name = operation.policy().name();
		this.calls.checkKey(name, key);
		RecordKey recordKey = this.calls.recordKey(name, scope, key);
		Exception[] afterReturn = new Exception[1];
		Object result;
		try {
			result = this.calls.execute(operation.policy(), key, recordKey, fingerprint, () -> {
				try {
					return delegate().handle(request, response, handler);
				}
				catch (HttpMediaTypeNotAcceptableException | HttpMessageNotWritableException ex) {
					// The handler returned, its response could not be written: it ran.
					recording.unrecordable("its response could not be written (" + ex.getMessage() + ")");
					afterReturn[0] = ex;
					return null;
				}
			}, marker, recording);
		}
		catch (Exception | Error ex) {
			throw ex;
		}
		catch (Throwable ex) {
			throw new UndeclaredThrowableException(ex);
		}
		if (afterReturn[0] != null) {
			throw afterReturn[0];
		}
		return (ModelAndView) result;
	}

	/**
	 * The fingerprint of the request as its client sent it: a form's fields and a
	 * multipart request's parts as the container parsed them (their encoding differs from
	 * one send to the next), any other body as received.
	 */
	private Fingerprint fingerprint(HttpServletRequest request) throws IOException, ServletException {
		MediaType type = (request.getContentType() != null) ? MediaType.parseMediaType(request.getContentType()) : null;
		MultiValueMap<String, String> parameters;
		byte[] body;
		if (type != null && MediaType.APPLICATION_FORM_URLENCODED.includes(type)) {
			parameters = new LinkedMultiValueMap<>();
			request.getParameterMap().forEach((name, values) -> parameters.addAll(name, List.of(values)));
			body = new byte[0];
		}
		else {
			parameters = UriComponentsBuilder.newInstance()
				.query(request.getQueryString())
				.build(true)
				.getQueryParams();
			body = (type != null && MediaType.MULTIPART_FORM_DATA.includes(type)) ? parts(request)
					: keptBody(request).body(this.maxRequestSize);
		}
		Object route = request.getAttribute(HandlerMapping.BEST_MATCHING_PATTERN_ATTRIBUTE);
		String path = UriUtils.decode(request.getRequestURI(), java.nio.charset.StandardCharsets.UTF_8);
		return this.fingerprints.of(request.getMethod(), path, (route != null) ? route.toString() : null,
				decoded(parameters), type, body);
	}

	private static MultiValueMap<String, String> decoded(MultiValueMap<String, String> parameters) {
		MultiValueMap<String, String> decoded = new LinkedMultiValueMap<>();
		parameters.forEach((name, values) -> values
			.forEach((value) -> decoded.add(UriUtils.decode(name, java.nio.charset.StandardCharsets.UTF_8),
					(value != null) ? UriUtils.decode(value, java.nio.charset.StandardCharsets.UTF_8) : null)));
		return decoded;
	}

	private KeptBodyRequest keptBody(HttpServletRequest request) {
		KeptBodyRequest kept = WebUtils.getNativeRequest(request, KeptBodyRequest.class);
		Assert.state(kept != null,
				"@Idempotent handlers need the idempotentResponseRecordingFilter bean registered " + "as a filter");
		return kept;
	}

	/**
	 * The parts of a multipart request, each with its name, file name, type and content,
	 * in the order of their names.
	 */
	private byte[] parts(HttpServletRequest request) throws IOException, ServletException {
		List<Part> parts = new ArrayList<>(request.getParts());
		parts.sort(Comparator.comparing(Part::getName));
		java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
		long size = 0;
		for (Part part : parts) {
			size += part.getSize();
			if (size > this.maxRequestSize) {
				throw new io.github.idempotent.core.IdempotencyRequestTooLargeException(this.maxRequestSize);
			}
			writePart(out, part);
		}
		return out.toByteArray();
	}

	private static void writePart(OutputStream out, Part part) throws IOException {
		for (String field : new String[] { part.getName(), part.getSubmittedFileName(), part.getContentType() }) {
			byte[] bytes = String.valueOf(field).getBytes(java.nio.charset.StandardCharsets.UTF_8);
			out.write((bytes.length + ":").getBytes(java.nio.charset.StandardCharsets.US_ASCII));
			out.write(bytes);
		}
		try (InputStream content = part.getInputStream()) {
			out.write((part.getSize() + ":").getBytes(java.nio.charset.StandardCharsets.US_ASCII));
			content.transferTo(out);
		}
	}

	private RequestMappingHandlerAdapter delegate() {
		return this.delegate.getObject();
	}

	/**
	 * First among the handler adapters: Spring MVC's own take any handler method.
	 */
	@Override
	public int getOrder() {
		return Ordered.HIGHEST_PRECEDENCE;
	}

}
