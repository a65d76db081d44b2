package io.github.idempotent.web;

import java.lang.reflect.Method;
import java.util.Collection;
import java.util.List;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.core.Ordered;
import org.springframework.util.Assert;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.reactive.HandlerMapping;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

import io.github.idempotent.core.OutcomeRecorder;

/**
 * Records the response of an {@code @Idempotent} handler method on WebFlux as it was
 * written (see {@link ResponseRecordingFilter} for Spring MVC): decorates each exchange's
 * response, which passes everything through until such a method returns. Runs after
 * Spring Security's web filters.
 */
public class ResponseRecordingWebFilter implements WebFilter, Ordered {

	private static final String RECORDING = ResponseRecordingWebFilter.class.getName() + ".RECORDING";

	private final ReplayedHeaders replayedHeaders;

	private final ReplayCustomizers customizers;

	private final long maxResultSize;

	private final boolean record;

	/**
	 * @param excludedHeaders response headers never stored, case-insensitive, besides
	 * credentials and hop-by-hop headers
	 * @param maxResultSize largest body recorded, in bytes: a larger one stores the
	 * method's return value, as before
	 * @param record whether responses are recorded; when not, recorded responses are
	 * still replayed, and return values stored through the codec
	 */
	public ResponseRecordingWebFilter(Collection<String> excludedHeaders, long maxResultSize, boolean record) {
		this(excludedHeaders, maxResultSize, record, List.of());
	}

	/**
	 * @param excludedHeaders response headers never stored, case-insensitive, besides
	 * credentials and hop-by-hop headers
	 * @param maxResultSize largest body recorded, in bytes: a larger one stores the
	 * method's return value, as before
	 * @param record whether responses are recorded; when not, recorded responses are
	 * still replayed, and return values stored through the codec
	 * @param customizers shown each replay before it is written, in this order
	 */
	public ResponseRecordingWebFilter(Collection<String> excludedHeaders, long maxResultSize, boolean record,
			List<IdempotentReplayCustomizer> customizers) {
		this(excludedHeaders, List.of(), maxResultSize, record, customizers);
	}

	/**
	 * @param excludedHeaders response headers never stored, case-insensitive, besides
	 * credentials and hop-by-hop headers
	 * @param replayedOnlyHeaders when not empty, the only response headers stored,
	 * case-insensitive, still less the excluded ones, credentials and hop-by-hop headers
	 * @param maxResultSize largest body recorded, in bytes: a larger one stores the
	 * method's return value, as before
	 * @param record whether responses are recorded; when not, recorded responses are
	 * still replayed, and return values stored through the codec
	 * @param customizers shown each replay before it is written, in this order
	 */
	public ResponseRecordingWebFilter(Collection<String> excludedHeaders, Collection<String> replayedOnlyHeaders,
			long maxResultSize, boolean record, List<IdempotentReplayCustomizer> customizers) {
		Assert.isTrue(maxResultSize > 0, "maxResultSize must be positive");
		Assert.notNull(customizers, "customizers must not be null");
		this.replayedHeaders = new ReplayedHeaders(excludedHeaders, replayedOnlyHeaders);
		this.customizers = new ReplayCustomizers(customizers, this.replayedHeaders);
		this.maxResultSize = maxResultSize;
		this.record = record;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
		RecordingServerHttpResponse response = new RecordingServerHttpResponse(exchange.getResponse(),
				this.replayedHeaders, this.maxResultSize, this.record, this.customizers);
		// Attributes are shared with the mutated exchange: the handler finds the
		// recording whichever of the two the Reactor context holds.
		exchange.getAttributes().put(RECORDING, response);
		return chain.filter(exchange.mutate().response(response).build())
			.then(Mono.defer(response::finish))
			.doFinally((signal) -> response.abandon());
	}

	/**
	 * The recorder of a call of {@code method} when it is the handler of
	 * {@code exchange}, else {@code null}.
	 */
	static @Nullable OutcomeRecorder recorderFor(ServerWebExchange exchange, Method method,
			@Nullable Class<?> targetClass) {
		if (!(exchange.getAttribute(RECORDING) instanceof RecordingServerHttpResponse recording)) {
			return null;
		}
		HandlerMethod handler = HandlerMethods
			.handlerCalled(exchange.getAttribute(HandlerMapping.BEST_MATCHING_HANDLER_ATTRIBUTE), method, targetClass);
		// A WebFlux view handler (rare in an API) has no recorder: its replays are not
		// shown to the customizers.
		return (handler != null && HandlerMethods.isRecorded(handler)) ? recording.handling(handler) : null;
	}

	@Override
	public int getOrder() {
		return ResponseRecordingFilter.ORDER;
	}

}
