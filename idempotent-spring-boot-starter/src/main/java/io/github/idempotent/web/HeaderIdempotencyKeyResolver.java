package io.github.idempotent.web;

import java.util.Enumeration;

import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;

import io.github.idempotent.core.IdempotencyKeyException;
import io.github.idempotent.core.IdempotencyKeyResolver;

/**
 * Takes the key of the current HTTP request from its {@code Idempotency-Key} header.
 * Outside a request, or when the header is absent, there is no key.
 */
public class HeaderIdempotencyKeyResolver implements IdempotencyKeyResolver {

	private final String headerName;

	public HeaderIdempotencyKeyResolver(String headerName) {
		Assert.hasText(headerName, "headerName must not be empty");
		this.headerName = headerName;
	}

	@Override
	public @Nullable String resolveKey() {
		HttpServletRequest request = currentRequest();
		if (request == null) {
			return null;
		}
		Enumeration<String> values = request.getHeaders(this.headerName);
		if (values == null || !values.hasMoreElements()) {
			return null;
		}
		String value = values.nextElement();
		if (values.hasMoreElements()) {
			throw new IdempotencyKeyException(
					"More than one " + this.headerName + " header was sent; send exactly one key per request");
		}
		return IdempotencyKeyHeader.parse(this.headerName, value);
	}

	@Override
	public boolean appliesToCurrentCall() {
		return currentRequest() != null;
	}

	@Override
	public String describeSource() {
		return "the " + this.headerName + " header";
	}

	public String getHeaderName() {
		return this.headerName;
	}

	static @Nullable HttpServletRequest currentRequest() {
		RequestAttributes attributes = RequestContextHolder.getRequestAttributes();
		return (attributes instanceof ServletRequestAttributes servlet) ? servlet.getRequest() : null;
	}

}
