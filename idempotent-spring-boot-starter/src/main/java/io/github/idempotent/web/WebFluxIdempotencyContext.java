package io.github.idempotent.web;

import java.lang.reflect.Method;
import java.util.List;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.util.Assert;
import org.springframework.web.filter.reactive.ServerWebExchangeContextFilter;
import org.springframework.web.server.ServerWebExchange;

import io.github.idempotent.aop.ReactiveIdempotencyContext;
import io.github.idempotent.core.IdempotencyKeyException;
import io.github.idempotent.core.IdempotencyObserver;
import io.github.idempotent.core.IdempotencyPolicy;
import io.github.idempotent.core.ReactiveIdempotencyScopeResolver;
import io.github.idempotent.core.OutcomeRecorder;

/**
 * The HTTP contract of {@code @Idempotent} on WebFlux: the key from the
 * {@code Idempotency-Key} header of the {@link ServerWebExchange} that
 * {@link ServerWebExchangeContextFilter} puts in the Reactor context (an event loop
 * thread carries no request), the scope from the application's resolver asked with that
 * Reactor context (the reactive security context for the principal scope), and the
 * {@code Idempotency-Key} echo and {@code Idempotent-Replayed} headers set on the
 * exchange's response before its body is written.
 */
public class WebFluxIdempotencyContext implements ReactiveIdempotencyContext {

	private final String headerName;

	private final String replayedHeaderName;

	public WebFluxIdempotencyContext(String headerName) {
		this(headerName, IdempotencyResponseHeaders.REPLAYED);
	}

	/**
	 * @param headerName header that carries the key
	 * @param replayedHeaderName header that marks a replay
	 */
	public WebFluxIdempotencyContext(String headerName, String replayedHeaderName) {
		Assert.hasText(headerName, "headerName must not be empty");
		Assert.hasText(replayedHeaderName, "replayedHeaderName must not be empty");
		this.headerName = headerName;
		this.replayedHeaderName = replayedHeaderName;
	}

	@Override
	public @Nullable String resolveKey(ContextView context) {
		ServerWebExchange exchange = ServerWebExchangeContextFilter.getExchange(context).orElse(null);
		if (exchange == null) {
			return null;
		}
		List<String> values = exchange.getRequest().getHeaders().get(this.headerName);
		if (values == null || values.isEmpty()) {
			return null;
		}
		if (values.size() > 1) {
			throw new IdempotencyKeyException(
					"More than one " + this.headerName + " header was sent; send exactly one key per request");
		}
		return IdempotencyKeyHeader.parse(this.headerName, values.get(0));
	}

	@Override
	public Mono<String> resolveScope(ContextView context, ReactiveIdempotencyScopeResolver resolver) {
		return resolver.resolveScope(context);
	}

	@Override
	public IdempotencyObserver observer(ContextView context) {
		ServerWebExchange exchange = ServerWebExchangeContextFilter.getExchange(context).orElse(null);
		if (exchange == null) {
			return IdempotencyObserver.NONE;
		}
		boolean keyFromHeader = exchange.getRequest().getHeaders().containsHeader(this.headerName);
		return new IdempotencyObserver() {

			@Override
			public void executed(IdempotencyPolicy policy, String key) {
				mark(exchange.getResponse(), key, false);
			}

			@Override
			public void replayed(IdempotencyPolicy policy, String key) {
				mark(exchange.getResponse(), key, true);
			}

			private void mark(ServerHttpResponse response, String key, boolean replayed) {
				if (response.isCommitted()) {
					return;
				}
				// As on MVC: a key taken from the body is not echoed.
				if (keyFromHeader) {
					response.getHeaders().set(WebFluxIdempotencyContext.this.headerName, key);
				}
				if (replayed) {
					response.getHeaders().set(WebFluxIdempotencyContext.this.replayedHeaderName, "true");
				}
			}

		};
	}

	@Override
	public @Nullable OutcomeRecorder recorder(ContextView context, Method method, @Nullable Class<?> targetClass) {
		ServerWebExchange exchange = ServerWebExchangeContextFilter.getExchange(context).orElse(null);
		return (exchange != null) ? ResponseRecordingWebFilter.recorderFor(exchange, method, targetClass) : null;
	}

	@Override
	public @Nullable ContextView currentContext() {
		return HandlerThreadContextWebFilter.current();
	}

	@Override
	public String describeSource() {
		return "the " + this.headerName + " header";
	}

}
