package io.github.idempotent.web;

import java.security.Principal;

import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxOperator;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoOperator;
import reactor.util.context.Context;
import reactor.util.context.ContextView;

import org.springframework.core.Ordered;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.codec.multipart.Part;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.util.MultiValueMap;
import org.springframework.web.filter.reactive.ServerWebExchangeContextFilter;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.ServerWebExchangeDecorator;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import org.springframework.web.server.WebSession;

/**
 * Makes the Reactor context of a WebFlux request known to a handler method that returns
 * no {@code Mono} (a {@code CompletableFuture}, a plain value): WebFlux calls such a
 * method on whatever thread delivered its last argument, with nothing of the request
 * bound to it, so that an {@code @Idempotent} handler would find neither its key nor its
 * caller there. This filter binds the request's context (the security context that Spring
 * Security's filters put in it, and the exchange) to the thread while it subscribes to
 * the rest of the chain and while the request's body, form data, parts, session and
 * principal deliver their signals: the moments WebFlux calls a handler in. Runs after
 * Spring Security's web filters.
 * <p>
 * A handler called on a signal this filter does not see (an argument resolved by a
 * resolver of the application's that completes on a thread of its own) finds no context:
 * its scope is then asked on its thread, which fails where Spring Security is present
 * rather than share the global scope.
 */
public class HandlerThreadContextWebFilter implements WebFilter, Ordered {

	/**
	 * Runs after {@link ResponseRecordingWebFilter}, so that the exchange in the context
	 * is the one whose response is recorded.
	 */
	public static final int ORDER = ResponseRecordingFilter.ORDER + 1;

	private static final ThreadLocal<@Nullable ContextView> current = new ThreadLocal<>();

	/**
	 * The Reactor context of the request that this thread is working for, or
	 * {@code null}.
	 */
	public static @Nullable ContextView current() {
		return current.get();
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
		return Mono.deferContextual((upstream) -> {
			Context context = Context.of(upstream)
				.put(ServerWebExchangeContextFilter.EXCHANGE_CONTEXT_ATTRIBUTE, exchange);
			return bind(chain.filter(new BindingExchange(exchange, context)), context);
		});
	}

	@Override
	public int getOrder() {
		return ORDER;
	}

	static <T> Mono<T> bind(Mono<T> source, ContextView context) {
		return new MonoOperator<>(source) {

			@Override
			public void subscribe(CoreSubscriber<? super T> actual) {
				run(context, () -> source.subscribe(new BindingSubscriber<>(actual, context)));
			}

		};
	}

	static <T> Flux<T> bind(Flux<T> source, ContextView context) {
		return new FluxOperator<>(source) {

			@Override
			public void subscribe(CoreSubscriber<? super T> actual) {
				run(context, () -> source.subscribe(new BindingSubscriber<>(actual, context)));
			}

		};
	}

	private static void run(ContextView context, Runnable signal) {
		ContextView previous = current.get();
		current.set(context);
		try {
			signal.run();
		}
		finally {
			if (previous != null) {
				current.set(previous);
			}
			else {
				current.remove();
			}
		}
	}

	/**
	 * Passes every signal on with the request's context bound to the thread.
	 */
	private static final class BindingSubscriber<T> implements CoreSubscriber<T> {

		private final CoreSubscriber<? super T> actual;

		private final ContextView context;

		BindingSubscriber(CoreSubscriber<? super T> actual, ContextView context) {
			this.actual = actual;
			this.context = context;
		}

		@Override
		public Context currentContext() {
			return this.actual.currentContext();
		}

		@Override
		public void onSubscribe(Subscription subscription) {
			run(this.context, () -> this.actual.onSubscribe(subscription));
		}

		@Override
		public void onNext(T value) {
			run(this.context, () -> this.actual.onNext(value));
		}

		@Override
		public void onError(Throwable failure) {
			run(this.context, () -> this.actual.onError(failure));
		}

		@Override
		public void onComplete() {
			run(this.context, this.actual::onComplete);
		}

	}

	/**
	 * The exchange whose asynchronous parts deliver their signals with the request's
	 * context bound.
	 */
	private static final class BindingExchange extends ServerWebExchangeDecorator {

		private final ContextView context;

		private final ServerHttpRequest request;

		BindingExchange(ServerWebExchange delegate, ContextView context) {
			super(delegate);
			this.context = context;
			this.request = new ServerHttpRequestDecorator(delegate.getRequest()) {

				@Override
				public Flux<DataBuffer> getBody() {
					return bind(super.getBody(), BindingExchange.this.context);
				}

			};
		}

		@Override
		public ServerHttpRequest getRequest() {
			return this.request;
		}

		@Override
		public Mono<WebSession> getSession() {
			return bind(super.getSession(), this.context);
		}

		@Override
		public <T extends Principal> Mono<T> getPrincipal() {
			return bind(super.<T>getPrincipal(), this.context);
		}

		@Override
		public Mono<MultiValueMap<String, String>> getFormData() {
			return bind(super.getFormData(), this.context);
		}

		@Override
		public Mono<MultiValueMap<String, Part>> getMultipartData() {
			return bind(super.getMultipartData(), this.context);
		}

	}

}
