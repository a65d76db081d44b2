package io.github.idempotent.web;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
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

import io.github.idempotent.core.IdempotencyExecutor;
import io.github.idempotent.core.IdempotencyExecutor.Hold;
import io.github.idempotent.core.IdempotencyExecutor.ResponseCapture;
import io.github.idempotent.core.IdempotencyExecutor.ResponseCapture.Replay;
import io.github.idempotent.core.RecordedResponse;

/**
 * The WebFlux twin of {@link RecordingServletResponse}: the first write takes what the
 * executor answered, the hold to record or the replay to write. A recording ends exactly
 * once, whichever signal comes first.
 */
final class RecordingServerHttpResponse extends ServerHttpResponseDecorator implements ZeroCopyHttpOutputMessage {

	private final WebContract contract;

	// The request's event loop, not the store client's thread.
	private final Executor resume = IdempotencyExecutor.ReactiveCalls.subscriberThread();

	// From the start: an exchange that ends before the call is held takes it, so that a
	// hold offered after that is ended by the executor.
	private final ResponseCapture capture = new ResponseCapture();

	private volatile boolean holding;

	private volatile @Nullable String sentKey;

	private volatile Map<String, List<String>> before = Map.of();

	private final AtomicBoolean answered = new AtomicBoolean();

	// The hold the first write took: ended once, by that write, its cancel or failure.
	private final AtomicReference<@Nullable Hold> taken = new AtomicReference<>();

	private volatile @Nullable Throwable failure;

	RecordingServerHttpResponse(ServerHttpResponse delegate, WebContract contract) {
		super(delegate);
		this.contract = contract;
	}

	ResponseCapture hold(@Nullable String sentKey) {
		this.sentKey = sentKey;
		this.before = headers();
		this.holding = true;
		return this.capture;
	}

	boolean holding() {
		return this.holding;
	}

	void failed(@Nullable Throwable failure) {
		this.failure = failure;
	}

	@Override
	public Mono<Void> writeWith(Publisher<? extends DataBuffer> body) {
		return write(body, () -> recordHeld(body), () -> super.writeWith(body));
	}

	@Override
	public Mono<Void> writeAndFlushWith(Publisher<? extends Publisher<? extends DataBuffer>> body) {
		return write(Flux.from(body).flatMap(Flux::from),
				() -> stored(end(null, "its response was a stream, sent as it came"))
					.then(Mono.defer(() -> super.writeAndFlushWith(body))),
				() -> super.writeAndFlushWith(body));
	}

	@Override
	public Mono<Void> setComplete() {
		return write(Flux.empty(),
				() -> record(new byte[0]).doOnCancel(() -> end(null, "the exchange was cancelled"))
					.doOnError((ex) -> end(null, "writing its response failed"))
					.then(Mono.defer(super::setComplete)),
				super::setComplete);
	}

	// A replay drops what the stand-in writes; the first write of a recording records. A
	// hold that comes after the first write (the exchange went out while the method ran)
	// finds the capture taken: the executor ends it.
	private Mono<Void> write(Publisher<? extends DataBuffer> body, Supplier<Mono<Void>> record,
			Supplier<Mono<Void>> pass) {
		return Mono.defer(() -> {
			if (!this.holding || !this.answered.compareAndSet(false, true)) {
				return pass.get();
			}
			Replay replay = this.capture.replay();
			if (replay != null) {
				return Flux.from(body).doOnNext(DataBufferUtils::release).then(Mono.defer(() -> writeReplay(replay)));
			}
			Hold hold = this.capture.take();
			if (!isCommitted()) {
				this.contract.mark(this.capture.isReplay(), hold != null, this.failure, this.sentKey,
						getHeaders()::set);
			}
			if (hold == null) {
				return pass.get();
			}
			this.taken.set(hold);
			return record.get();
		});
	}

	// Past the limit, as on Spring MVC: what was held is sent, the rest passes.
	private Mono<Void> recordHeld(Publisher<? extends DataBuffer> body) {
		HeldBody held = new HeldBody(this.contract.maxResultSize);
		Flux<DataBuffer> sent = Flux.<DataBuffer>from(body).concatMap((buffer) -> {
			if (held.isOverflowed()) {
				return Mono.just(buffer);
			}
			byte[] bytes = drain(buffer);
			if (held.hold(bytes, 0, bytes.length)) {
				return Mono.empty();
			}
			return stored(end(null, HeldBody.TOO_LARGE))
				.thenMany(Flux.just(held.toByteArray(), bytes).map(bufferFactory()::wrap));
		}, 0).concatWith(Mono.defer(() -> {
			if (held.isOverflowed()) {
				return Mono.empty();
			}
			byte[] bytes = held.toByteArray();
			return record(bytes).then(Mono.defer(() -> {
				getHeaders().setContentLength(bytes.length);
				return (bytes.length > 0) ? Mono.just(bufferFactory().wrap(bytes)) : Mono.empty();
			}));
		}))
			.doOnDiscard(DataBuffer.class, DataBufferUtils::release)
			.doOnCancel(() -> end(null, "the exchange was cancelled while its response was written"))
			.doOnError((ex) -> end(null, "writing its response failed"));
		return super.writeWith(sent);
	}

	static byte[] drain(DataBuffer buffer) {
		byte[] bytes = new byte[buffer.readableByteCount()];
		buffer.read(bytes);
		DataBufferUtils.release(buffer);
		return bytes;
	}

	@Override
	public Mono<Void> writeWith(Path file, long position, long count) {
		if (!this.holding && getDelegate() instanceof ZeroCopyHttpOutputMessage zeroCopy) {
			return zeroCopy.writeWith(file, position, count);
		}
		return writeWith(DataBufferUtils.takeUntilByteCount(
				DataBufferUtils.read(new FileSystemResource(file), position, bufferFactory(), 8192), count));
	}

	// For a handler result that wrote nothing, as a replay's stand-in.
	Mono<Void> finish() {
		return (this.holding && !this.answered.get()) ? setComplete() : Mono.empty();
	}

	// A call still running ends as it returns: the executor finds the capture taken.
	void abandon() {
		Hold hold = this.capture.take();
		if (hold != null) {
			hold.end(status(), null, "the exchange ended before its response was written", this.failure);
		}
	}

	private int status() {
		HttpStatusCode status = getStatusCode();
		return (status != null) ? status.value() : HttpStatus.OK.value();
	}

	private Mono<Void> record(byte[] body) {
		Map<String, List<String>> headers = this.contract.replayedHeaders
			.recorded(getHeaders().getFirst(HttpHeaders.CONTENT_TYPE), this.before, headers());
		return stored(end(new RecordedResponse(status(), headers, body), null));
	}

	private Map<String, List<String>> headers() {
		return ReplayedHeaders.snapshot(getHeaders().headerNames(), getHeaders()::get);
	}

	// The commit's own actions must not run on the thread that read the store's reply.
	private Mono<Void> stored(CompletableFuture<Void> ended) {
		return Mono.fromFuture(IdempotencyExecutor.ReactiveCalls.resumeOn(ended, this.resume));
	}

	private Mono<Void> writeReplay(Replay replay) {
		RecordedResponse response = replay.response();
		setStatusCode(HttpStatusCode.valueOf(response.status()));
		this.contract.writeReplayed(replay, this.sentKey, this.before, headers(), getHeaders()::put);
		getHeaders().setContentLength(response.body().length);
		return (response.body().length == 0) ? super.setComplete()
				: super.writeWith(Mono.fromSupplier(() -> bufferFactory().wrap(response.body())));
	}

	private CompletableFuture<Void> end(@Nullable RecordedResponse recorded, @Nullable String notStored) {
		Hold hold = this.taken.getAndSet(null);
		return (hold != null) ? hold.end(status(), recorded, notStored, this.failure)
				: CompletableFuture.completedFuture(null);
	}

}
