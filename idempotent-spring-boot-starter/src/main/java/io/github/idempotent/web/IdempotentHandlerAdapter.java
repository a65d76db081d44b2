package io.github.idempotent.web;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;

import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.Part;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.http.HttpMethod;
import org.springframework.http.MediaType;
import org.springframework.http.server.PathContainer;
import org.springframework.http.server.RequestPath;
import org.springframework.http.converter.HttpMessageNotWritableException;
import org.springframework.util.Assert;
import org.springframework.util.LinkedMultiValueMap;
import org.springframework.util.MultiValueMap;
import org.springframework.util.ReflectionUtils;
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

import io.github.idempotent.core.IdempotentOperation;
import io.github.idempotent.core.IdempotencyRequestTooLargeException;
import io.github.idempotent.core.IdempotencyScopeResolver;
import io.github.idempotent.core.IdempotencyExecutor;
import io.github.idempotent.core.IdempotencyExecutor.Admission;
import io.github.idempotent.core.IdempotencyExecutor.ResponseCapture;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;

/**
 * Guards {@code @Idempotent} handler methods (and configured routes) on Spring MVC with
 * the request in hand, ahead of the {@link RequestMappingHandlerAdapter} it delegates to.
 * A handler whose key or scope comes from its arguments is claimed when it is called,
 * through {@link IdempotentOperation#dispatch}.
 */
class IdempotentHandlerAdapter extends GuardingHandlerAdapter<RequestMappingHandlerAdapter> implements HandlerAdapter {

	private final IdempotencyScopeResolver scopeResolver;

	IdempotentHandlerAdapter(ObjectProvider<RequestMappingHandlerAdapter> delegate, IdempotencyExecutor executor,
			IdempotencyScopeResolver scopeResolver, WebContract contract) {
		super(delegate, executor, contract);
		this.scopeResolver = scopeResolver;
	}

	@Override
	public @Nullable ModelAndView handle(HttpServletRequest request, HttpServletResponse response, Object handler)
			throws Exception {
		HandlerMethod method = (HandlerMethod) handler;
		PathContainer path = ServletRequestPathUtils.hasParsedRequestPath(request)
				? ServletRequestPathUtils.getParsedRequestPath(request).pathWithinApplication()
				: RequestPath.parse(request.getRequestURI(), request.getContextPath()).pathWithinApplication();
		IdempotentOperation operation = this.contract.operation(this.executor, method,
				HttpMethod.valueOf(request.getMethod()), path);
		if (operation == null) {
			return delegate().handle(request, response, handler);
		}
		RecordingServletResponse recording = ResponseRecordingFilter.recording(request);
		Assert.state(recording != null,
				"@Idempotent handlers need the idempotentResponseRecordingFilter bean registered as a filter");
		WebAsyncManager async = WebAsyncUtils.getAsyncManager(request);
		if (async.hasConcurrentResult()) {
			// The async dispatch of a handler that returned a future or a Mono.
			if (async.getConcurrentResult() instanceof Throwable failure) {
				recording.failed(failure);
			}
			recording.mark();
			return delegate().handle(request, response, handler);
		}
		String key = key(operation, (header) -> Collections.list(request.getHeaders(header)));
		if (key == null && !operation.needsArguments()) {
			return delegate().handle(request, response, handler);
		}
		String scope = (operation.scope() != null) ? null : PrincipalScopeResolver.ofRequestInHand(this.scopeResolver);
		Fingerprint fingerprint = fingerprint(request);
		ResponseCapture capture = recording.hold(key);
		try {
			ModelAndView view;
			if (operation.needsArguments()) {
				view = operation.dispatch(method.getMethod(), key, scope, fingerprint, capture,
						() -> delegate().handle(request, response, handler));
			}
			else {
				RecordKey recordKey = operation.recordKey(this.executor, scope, key);
				try (Admission call = this.executor.admit(operation.policy(), key, recordKey, fingerprint, capture)) {
					view = call.isAnswered() ? (ModelAndView) call.answer()
							: handle(call, request, response, method, recording);
				}
			}
			// Marked as the call returns, so that a postHandle sees it; not a future or a
			// Mono, whose outcome is marked when it is known.
			if (!async.isConcurrentHandlingStarted()) {
				recording.returned();
			}
			return view;
		}
		catch (Throwable ex) {
			recording.passThrough();
			// A replayed cacheFor exception, before the error handling writes it.
			recording.mark();
			ReflectionUtils.rethrowException(ex);
			return null;
		}
	}

	private @Nullable ModelAndView handle(Admission call, HttpServletRequest request, HttpServletResponse response,
			HandlerMethod handler, RecordingServletResponse recording) throws Throwable {
		ModelAndView view;
		try {
			view = delegate().handle(request, response, handler);
		}
		catch (HttpMediaTypeNotAcceptableException | HttpMessageNotWritableException ex) {
			// The handler returned, its response could not be written: it ran.
			recording.unrecordable("its response could not be written (" + ex.getMessage() + ")");
			call.returned(null);
			throw ex;
		}
		catch (Throwable ex) {
			call.failed(ex);
			throw ex;
		}
		call.returned(view);
		return view;
	}

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
			parameters = decoded(
					UriComponentsBuilder.newInstance().query(request.getQueryString()).build(true).getQueryParams());
			// The filter that made the recording kept the body.
			body = (type != null && MediaType.MULTIPART_FORM_DATA.includes(type)) ? parts(request)
					: WebUtils.getNativeRequest(request, KeptBodyRequest.class).body(this.contract.maxRequestSize);
		}
		return RequestFingerprint.of(this.executor, request.getMethod(), request.getRequestURI(),
				request.getAttribute(HandlerMapping.BEST_MATCHING_PATTERN_ATTRIBUTE), parameters, type, body);
	}

	private static MultiValueMap<String, String> decoded(MultiValueMap<String, String> parameters) {
		MultiValueMap<String, String> decoded = new LinkedMultiValueMap<>();
		parameters.forEach(
				(name, values) -> values.forEach((value) -> decoded.add(UriUtils.decode(name, StandardCharsets.UTF_8),
						(value != null) ? UriUtils.decode(value, StandardCharsets.UTF_8) : null)));
		return decoded;
	}

	private byte[] parts(HttpServletRequest request) throws IOException, ServletException {
		List<Part> parts = request.getParts().stream().sorted(Comparator.comparing(Part::getName)).toList();
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		long size = 0;
		for (Part part : parts) {
			size += part.getSize();
			if (size > this.contract.maxRequestSize) {
				throw new IdempotencyRequestTooLargeException(this.contract.maxRequestSize);
			}
			RequestFingerprint.part(out, part.getName(), part.getSubmittedFileName(), part.getContentType(),
					part.getSize());
			try (InputStream content = part.getInputStream()) {
				content.transferTo(out);
			}
		}
		return out.toByteArray();
	}

}
