package io.github.idempotent.web;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.http.server.reactive.ServerHttpResponseDecorator;

import io.github.idempotent.core.OutcomeRecorder;
import io.github.idempotent.core.OwnerHandle;
import io.github.idempotent.core.RecordedResponse;

/**
 * The WebFlux twin of {@link RecordingServletResponse}: passes everything through until
 * the exchange's handler, an {@code @Idempotent} method, has returned; then joins the
 * body the handler's result writes, stores status, the headers set since and the body as
 * written, and only then sends them. A replay writes a recorded response in place of
 * whatever the handler's empty stand-in would have written. A streamed body
 * ({@code writeAndFlushWith}), a server error, a body above the result size limit or an
 * exchange that ends without writing stores the method's return value instead.
 */
final class RecordingServerHttpResponse extends ServerHttpResponseDecorator implements OutcomeRecorder {

	private final ReplayedHeaders replayedHeaders;

	private final long limit;

	private final AtomicReference<@Nullable State> state = new AtomicReference<>();

	RecordingServerHttpResponse(ServerHttpResponse delegate, ReplayedHeaders replayedHeaders, long limit) {
		super(delegate);
		this.replayedHeaders = replayedHeaders;
		this.limit = limit;
	}

	@Override
	public void recordLater(OwnerHandle owner, @Nullable Object value) {
		Recording recording = new Recording(owner, value, snapshot(getHeaders()));
		if (isCommitted() || !this.state.compareAndSet(null, recording)) {
			owner.completeAsync(value);
		}
	}

	@Override
	public @Nullable Object replay(RecordedResponse response) {
		this.state.set(new Replaying(response));
		// Status and type first, so that the handler's empty stand-in meets a preset
		// content type instead of content negotiation.
		writeHead(response);
		return null;
	}

	@Override
	public Mono<Void> writeWith(Publisher<? extends DataBuffer> body) {
		State state = this.state.get();
		if (state instanceof Replaying replaying) {
			return Flux.from(body).doOnNext(DataBufferUtils::release).then(Mono.defer(() -> writeReplay(replaying)));
		}
		if (state instanceof Recording recording && this.state.compareAndSet(recording, Done.INSTANCE)) {
			return DataBufferUtils.join(body)
				.map(RecordingServerHttpResponse::bytes)
				.defaultIfEmpty(new byte[0])
				.flatMap((bytes) -> record(recording, bytes).then(Mono.defer(() -> writeBytes(bytes))))
				.doOnError((ex) -> recording.owner.completeAsync(recording.value));
		}
		return super.writeWith(body);
	}

	@Override
	public Mono<Void> writeAndFlushWith(Publisher<? extends Publisher<? extends DataBuffer>> body) {
		State state = this.state.get();
		if (state instanceof Replaying replaying) {
			return Flux.from(body)
				.flatMap(Flux::from)
				.doOnNext(DataBufferUtils::release)
				.then(Mono.defer(() -> writeReplay(replaying)));
		}
		if (state instanceof Recording recording && this.state.compareAndSet(recording, Done.INSTANCE)) {
			// A stream is sent as it comes: the return value is stored instead.
			return Mono.fromFuture(recording.owner.completeAsync(recording.value))
				.then(Mono.defer(() -> super.writeAndFlushWith(body)));
		}
		return super.writeAndFlushWith(body);
	}

	@Override
	public Mono<Void> setComplete() {
		State state = this.state.get();
		if (state instanceof Replaying replaying) {
			return writeReplay(replaying);
		}
		if (state instanceof Recording recording && this.state.compareAndSet(recording, Done.INSTANCE)) {
			return record(recording, new byte[0]).then(Mono.defer(super::setComplete));
		}
		return super.setComplete();
	}

	/**
	 * Ends an exchange whose handler result wrote nothing through this response (an empty
	 * {@code Mono} of a {@code ResponseEntity}, as a replay's stand-in is): a replay is
	 * written, a first call recorded with an empty body.
	 */
	Mono<Void> finish() {
		return (this.state.get() != null) ? setComplete() : Mono.empty();
	}

	/**
	 * Stores the return value of a call whose exchange ended before its response was
	 * written (cancelled, failed), so that its hold on the key ends.
	 */
	void abandon() {
		State state = this.state.get();
		if (state instanceof Recording recording && this.state.compareAndSet(recording, Done.INSTANCE)) {
			recording.owner.completeAsync(recording.value);
		}
	}

	private Mono<Void> record(Recording recording, byte[] body) {
		HttpStatusCode status = getStatusCode();
		int code = (status != null) ? status.value() : HttpStatus.OK.value();
		if (code >= 500 || body.length > this.limit) {
			return Mono.fromFuture(recording.owner.completeAsync(recording.value));
		}
		RecordedResponse response = new RecordedResponse(code, recordedHeaders(recording.before), body);
		return Mono.fromFuture(recording.owner.completeRecordedAsync(response));
	}

	private Map<String, List<String>> recordedHeaders(Map<String, List<String>> before) {
		Map<String, List<String>> headers = new LinkedHashMap<>();
		HttpHeaders current = getHeaders();
		String contentType = current.getFirst(HttpHeaders.CONTENT_TYPE);
		if (contentType != null) {
			headers.put(HttpHeaders.CONTENT_TYPE, List.of(contentType));
		}
		current.forEach((name, values) -> {
			if (ReplayedHeaders.isContentHeader(name) || !this.replayedHeaders.isReplayed(name) || values.isEmpty()
					|| values.equals(before.get(name))) {
				return;
			}
			headers.put(name, List.copyOf(values));
		});
		return headers;
	}

	private static Map<String, List<String>> snapshot(HttpHeaders headers) {
		Map<String, List<String>> snapshot = new LinkedHashMap<>();
		headers.forEach((name, values) -> snapshot.put(name, new ArrayList<>(values)));
		return snapshot;
	}

	private void writeHead(RecordedResponse response) {
		setStatusCode(HttpStatusCode.valueOf(response.status()));
		HttpHeaders headers = getHeaders();
		response.headers().forEach(headers::put);
	}

	private Mono<Void> writeReplay(Replaying replaying) {
		if (!this.state.compareAndSet(replaying, Done.INSTANCE)) {
			return Mono.empty();
		}
		writeHead(replaying.response);
		return writeBytes(replaying.response.body());
	}

	private Mono<Void> writeBytes(byte[] bytes) {
		getHeaders().setContentLength(bytes.length);
		if (bytes.length == 0) {
			return super.setComplete();
		}
		return super.writeWith(Mono.fromSupplier(() -> bufferFactory().wrap(bytes)));
	}

	private static byte[] bytes(DataBuffer buffer) {
		try {
			byte[] bytes = new byte[buffer.readableByteCount()];
			buffer.read(bytes);
			return bytes;
		}
		finally {
			DataBufferUtils.release(buffer);
		}
	}

	private sealed interface State permits Recording, Replaying, Done {

	}

	private record Recording(OwnerHandle owner, @Nullable Object value,
			Map<String, List<String>> before) implements State {

	}

	private record Replaying(RecordedResponse response) implements State {

	}

	private enum Done implements State {

		INSTANCE

	}

}
