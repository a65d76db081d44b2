package io.github.idempotent.web;

import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.core.Ordered;
import org.springframework.util.Assert;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

/**
 * Records the response of an {@code @Idempotent} handler method on WebFlux as it was
 * written (see {@link ResponseRecordingFilter} for Spring MVC): decorates each exchange's
 * response, which passes everything through until the web layer starts a guarded call of
 * the exchange's handler. Runs after Spring Security's web filters.
 */
public class ResponseRecordingWebFilter implements WebFilter, Ordered {

	private static final String RECORDING = ResponseRecordingWebFilter.class.getName() + ".RECORDING";

	private final ReplayedHeaders replayedHeaders;

	private final ReplayCustomizers customizers;

	private final long maxResultSize;

	/**
	 * @param excludedHeaders response headers never stored, case-insensitive, besides
	 * credentials and hop-by-hop headers
	 * @param replayedOnlyHeaders when not empty, the only response headers stored,
	 * case-insensitive, still less the excluded ones, credentials and hop-by-hop headers
	 * @param maxResultSize largest body recorded, in bytes
	 * @param customizers shown each replay before it is written, in this order
	 */
	public ResponseRecordingWebFilter(Collection<String> excludedHeaders, Collection<String> replayedOnlyHeaders,
			long maxResultSize, List<IdempotentReplayCustomizer> customizers) {
		Assert.isTrue(maxResultSize > 0, "maxResultSize must be positive");
		Assert.notNull(customizers, "customizers must not be null");
		this.replayedHeaders = new ReplayedHeaders(excludedHeaders, replayedOnlyHeaders);
		this.customizers = new ReplayCustomizers(customizers, this.replayedHeaders);
		this.maxResultSize = maxResultSize;
	}

	/**
	 * Runs the rest of the chain. A client that goes away while a guarded call runs does
	 * not cancel it: the call ran (or is running), so its response is still written here
	 * and stored, and the client's retry gets it; any other exchange is cancelled as
	 * usual.
	 */
	@Override
	public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
		RecordingServerHttpResponse response = new RecordingServerHttpResponse(exchange.getResponse(),
				this.replayedHeaders, this.maxResultSize, this.customizers);
		// Attributes are shared with the mutated exchange.
		exchange.getAttributes().put(RECORDING, response);
		Mono<Void> recorded = chain.filter(exchange.mutate().response(response).build())
			.then(Mono.defer(response::finish))
			.doFinally((signal) -> response.abandon());
		return Mono.deferContextual((context) -> {
			CompletableFuture<Void> done = recorded.contextWrite(context).toFuture();
			return Mono.fromFuture(done, true).doOnCancel(() -> {
				if (!response.records()) {
					done.cancel(true);
				}
			});
		});
	}

	/**
	 * The recording response of {@code exchange}, or {@code null} when this filter does
	 * not decorate it.
	 */
	static @Nullable RecordingServerHttpResponse recording(ServerWebExchange exchange) {
		return (exchange.getAttribute(RECORDING) instanceof RecordingServerHttpResponse recording) ? recording : null;
	}

	@Override
	public int getOrder() {
		return ResponseRecordingFilter.ORDER;
	}

}
