package io.github.idempotent.web;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.core.io.FileSystemResource;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.ZeroCopyHttpOutputMessage;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.http.server.reactive.ServerHttpResponseDecorator;

import io.github.idempotent.core.IdempotencyPolicy;
import io.github.idempotent.core.OutcomeRecorder;
import io.github.idempotent.core.OutcomeRecorder.Hold;
import io.github.idempotent.core.ReactiveIdempotentCalls;
import io.github.idempotent.core.RecordedResponse;

/**
 * The WebFlux twin of {@link RecordingServletResponse}. A recording ends exactly once,
 * whichever signal comes first.
 */
final class RecordingServerHttpResponse extends ServerHttpResponseDecorator
		implements OutcomeRecorder, ZeroCopyHttpOutputMessage {

	private final WebContract contract;

	private final AtomicReference<@Nullable State> state = new AtomicReference<>();

	// The request's event loop, not the store client's thread.
	private final Executor resume = ReactiveIdempotentCalls.subscriberThread();

	private volatile boolean holding;

	private volatile @Nullable Throwable failure;

	RecordingServerHttpResponse(ServerHttpResponse delegate, WebContract contract) {
		super(delegate);
		this.contract = contract;
	}

	void hold() {
		this.holding = true;
	}

	void failed(Throwable failure) {
		this.failure = failure;
	}

	@Override
	public boolean records() {
		return this.holding;
	}

	@Override
	public void recordLater(Hold hold, @Nullable Object value) {
		Recording recording = new Recording(hold, headers(), this, new AtomicBoolean());
		if (isCommitted() || !this.state.compareAndSet(null, recording)) {
			// The client went away while the method ran.
			recording.end(null, "the exchange ended before its response was written");
		}
	}

	@Override
	public @Nullable Object replay(IdempotencyPolicy policy, String key, RecordedResponse response) {
		this.state.set(new Replaying(response));
		// Before the stand-in runs, so that it meets a preset content type instead of
		// content negotiation; headers set after this win.
		setStatusCode(HttpStatusCode.valueOf(response.status()));
		this.contract.replayed(policy.name(), key, response).forEach(getHeaders()::put);
		return null;
	}

	@Override
	public Mono<Void> writeWith(Publisher<? extends DataBuffer> body) {
		return write(body, (recording) -> recordHeld(recording, body), () -> super.writeWith(body));
	}

	@Override
	public Mono<Void> writeAndFlushWith(Publisher<? extends Publisher<? extends DataBuffer>> body) {
		return write(Flux.from(body).flatMap(Flux::from),
				(recording) -> stored(recording.end(null, "its response was a stream, sent as it came"))
					.then(Mono.defer(() -> super.writeAndFlushWith(body))),
				() -> super.writeAndFlushWith(body));
	}

	@Override
	public Mono<Void> setComplete() {
		return write(Flux.empty(),
				(recording) -> record(recording, new byte[0])
					.doOnCancel(() -> recording.end(null, "the exchange was cancelled"))
					.doOnError((ex) -> recording.end(null, "writing its response failed"))
					.then(Mono.defer(super::setComplete)),
				super::setComplete);
	}

	// A replay drops what the stand-in writes; the first write of a recording records.
	private Mono<Void> write(Publisher<? extends DataBuffer> body, Function<Recording, Mono<Void>> record,
			Supplier<Mono<Void>> pass) {
		return Mono.defer(() -> {
			State state = this.state.get();
			if (state instanceof Replaying replaying) {
				return Flux.from(body)
					.doOnNext(DataBufferUtils::release)
					.then(Mono.defer(() -> writeReplay(replaying)));
			}
			if (state instanceof Recording recording && this.state.compareAndSet(recording, Done.INSTANCE)) {
				return record.apply(recording);
			}
			return pass.get();
		});
	}

	// Past the limit, as on Spring MVC: what was held is sent, the rest passes.
	private Mono<Void> recordHeld(Recording recording, Publisher<? extends DataBuffer> body) {
		HeldBody held = new HeldBody(this.contract.maxResultSize);
		Flux<DataBuffer> sent = Flux.<DataBuffer>from(body).concatMap((buffer) -> {
			if (held.isOverflowed()) {
				return Mono.just(buffer);
			}
			byte[] bytes = drain(buffer);
			if (held.hold(bytes, 0, bytes.length)) {
				return Mono.empty();
			}
			return stored(recording.end(null, HeldBody.TOO_LARGE))
				.thenMany(Flux.just(held.toByteArray(), bytes).map(bufferFactory()::wrap));
		}, 0).concatWith(Mono.defer(() -> {
			if (held.isOverflowed()) {
				return Mono.empty();
			}
			byte[] bytes = held.toByteArray();
			return record(recording, bytes).then(Mono.defer(() -> {
				getHeaders().setContentLength(bytes.length);
				return (bytes.length > 0) ? Mono.just(bufferFactory().wrap(bytes)) : Mono.empty();
			}));
		}))
			.doOnDiscard(DataBuffer.class, DataBufferUtils::release)
			.doOnCancel(() -> recording.end(null, "the exchange was cancelled while its response was written"))
			.doOnError((ex) -> recording.end(null, "writing its response failed"));
		return super.writeWith(sent);
	}

	// Its bytes, the buffer released.
	static byte[] drain(DataBuffer buffer) {
		byte[] bytes = new byte[buffer.readableByteCount()];
		buffer.read(bytes);
		DataBufferUtils.release(buffer);
		return bytes;
	}

	@Override
	public Mono<Void> writeWith(Path file, long position, long count) {
		if (this.state.get() == null && getDelegate() instanceof ZeroCopyHttpOutputMessage zeroCopy) {
			return zeroCopy.writeWith(file, position, count);
		}
		return writeWith(DataBufferUtils.takeUntilByteCount(
				DataBufferUtils.read(new FileSystemResource(file), position, bufferFactory(), 8192), count));
	}

	// For a handler result that wrote nothing, as a replay's stand-in.
	Mono<Void> finish() {
		return (this.state.get() != null) ? setComplete() : Mono.empty();
	}

	// A call whose method still runs ends when it returns: its recorder finds this done.
	void abandon() {
		State state = this.state.getAndUpdate((current) -> (current instanceof Replaying) ? current : Done.INSTANCE);
		if (state instanceof Recording recording) {
			recording.end(null, "the exchange ended before its response was written");
		}
	}

	private int status() {
		HttpStatusCode status = getStatusCode();
		return (status != null) ? status.value() : HttpStatus.OK.value();
	}

	private Mono<Void> record(Recording recording, byte[] body) {
		Map<String, List<String>> headers = this.contract.replayedHeaders
			.recorded(getHeaders().getFirst(HttpHeaders.CONTENT_TYPE), recording.before, headers());
		return stored(recording.end(new RecordedResponse(status(), headers, body), null));
	}

	private Map<String, List<String>> headers() {
		return ReplayedHeaders.snapshot(getHeaders().headerNames(), getHeaders()::get);
	}

	// The commit's own actions must not run on the thread that read the store's reply.
	private Mono<Void> stored(CompletableFuture<Void> ended) {
		return Mono.fromFuture(ReactiveIdempotentCalls.resumeOn(ended, this.resume));
	}

	private Mono<Void> writeReplay(Replaying replaying) {
		if (!this.state.compareAndSet(replaying, Done.INSTANCE)) {
			return Mono.empty();
		}
		// Again, over what the stand-in's handling may have applied or removed.
		RecordedResponse response = replaying.response;
		setStatusCode(HttpStatusCode.valueOf(response.status()));
		if (response.contentType() != null) {
			getHeaders().set(HttpHeaders.CONTENT_TYPE, response.contentType());
		}
		getHeaders().setContentLength(response.body().length);
		if (response.body().length == 0) {
			return super.setComplete();
		}
		return super.writeWith(Mono.fromSupplier(() -> bufferFactory().wrap(response.body())));
	}

	private sealed interface State permits Recording, Replaying, Done {

	}

	// Ended once, by the first write, cancellation or failure.
	private record Recording(Hold hold, Map<String, List<String>> before, RecordingServerHttpResponse response,
			AtomicBoolean ended) implements State {

		CompletableFuture<Void> end(@Nullable RecordedResponse recorded, @Nullable String notStored) {
			if (!this.ended.compareAndSet(false, true)) {
				return CompletableFuture.completedFuture(null);
			}
			return this.hold.end(this.response.status(), recorded, notStored, this.response.failure);
		}

	}

	private record Replaying(RecordedResponse response) implements State {

	}

	private enum Done implements State {

		INSTANCE

	}

}
