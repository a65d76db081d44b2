package io.github.idempotent.web;

import java.util.concurrent.CompletableFuture;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.core.Ordered;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

/**
 * The WebFlux twin of {@link ResponseRecordingFilter}.
 */
class ResponseRecordingWebFilter implements WebFilter, Ordered {

	private static final String RECORDING = ResponseRecordingWebFilter.class.getName() + ".RECORDING";

	private final WebContract contract;

	ResponseRecordingWebFilter(WebContract contract) {
		this.contract = contract;
		// Eager, as WebContract#customizers says.
		contract.customizers();
	}

	// A client that goes away does not cancel a guarded call: its retry gets the replay.
	@Override
	public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
		RecordingServerHttpResponse response = new RecordingServerHttpResponse(exchange.getResponse(), this.contract);
		// Attributes are shared with the mutated exchange.
		exchange.getAttributes().put(RECORDING, response);
		Mono<Void> recorded = chain.filter(exchange.mutate().response(response).build())
			.then(Mono.defer(response::finish))
			.doFinally((signal) -> response.abandon());
		return Mono.deferContextual((context) -> {
			CompletableFuture<Void> done = recorded.contextWrite(context).toFuture();
			return Mono.fromFuture(done, true).doOnCancel(() -> {
				if (!response.holding()) {
					done.cancel(true);
				}
			});
		});
	}

	static @Nullable RecordingServerHttpResponse recording(ServerWebExchange exchange) {
		return (exchange.getAttribute(RECORDING) instanceof RecordingServerHttpResponse recording) ? recording : null;
	}

	@Override
	public int getOrder() {
		return ResponseRecordingFilter.ORDER;
	}

}
