package io.github.idempotent.web;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

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
import io.github.idempotent.core.OwnerHandle;
import io.github.idempotent.core.ReactiveIdempotentCalls;
import io.github.idempotent.core.RecordedResponse;

/**
 * The WebFlux twin of {@link RecordingServletResponse}. A recording ends exactly once,
 * whichever signal comes first.
 */
final class RecordingServerHttpResponse extends ServerHttpResponseDecorator
		implements OutcomeRecorder, ZeroCopyHttpOutputMessage {

	private final ReplayedHeaders replayedHeaders;

	private final long limit;

	private final AtomicReference<@Nullable State> state = new AtomicReference<>();

	private final ReplayCustomizers customizers;

	// The request's event loop, not the store client's thread.
	private final Executor resume = ReactiveIdempotentCalls.subscriberThread();

	private volatile boolean holding;

	private volatile @Nullable Throwable failure;

	RecordingServerHttpResponse(ServerHttpResponse delegate, ReplayedHeaders replayedHeaders, long limit,
			ReplayCustomizers customizers) {
		super(delegate);
		this.replayedHeaders = replayedHeaders;
		this.limit = limit;
		this.customizers = customizers;
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
	public void recordLater(OwnerHandle owner, @Nullable Object value) {
		Recording recording = new Recording(owner, snapshot(getHeaders()), this);
		if (isCommitted() || !this.state.compareAndSet(null, recording)) {
			// The client went away while the method ran.
			recording.endNotStored("the exchange ended before its response was written");
		}
	}

	@Override
	public @Nullable Object replay(IdempotencyPolicy policy, String key, RecordedResponse response) {
		this.state.set(new Replaying(response));
		// Before the stand-in runs, so that it meets a preset content type instead of
		// content negotiation; headers set after this win.
		setStatusCode(HttpStatusCode.valueOf(response.status()));
		response.headers().forEach(getHeaders()::put);
		this.customizers.recorded(policy.name(), key, response).forEach(getHeaders()::put);
		return null;
	}

	@Override
	public Mono<Void> writeWith(Publisher<? extends DataBuffer> body) {
		return Mono.defer(() -> {
			State state = this.state.get();
			if (state instanceof Replaying replaying) {
				return Flux.from(body)
					.doOnNext(DataBufferUtils::release)
					.then(Mono.defer(() -> writeReplay(replaying)));
			}
			if (state instanceof Recording recording && this.state.compareAndSet(recording, Done.INSTANCE)) {
				return recordHeld(recording, body);
			}
			return super.writeWith(body);
		});
	}

	// Past the limit, as HeldBody on Spring MVC: what was held is sent, the rest passes.
	private Mono<Void> recordHeld(Recording recording, Publisher<? extends DataBuffer> body) {
		HeldBuffers held = new HeldBuffers(this.limit);
		Flux<DataBuffer> sent = Flux.<DataBuffer>from(body).concatMap((buffer) -> {
			if (held.isOverflowed()) {
				return Mono.just(buffer);
			}
			if (held.hold(buffer)) {
				return Mono.empty();
			}
			Flux<DataBuffer> spilled = held.spill(buffer);
			return stored(recording.endNotStored("its response body was larger than idempotent.max-result-size"))
				.thenMany(spilled);
		}, 0)
			.concatWith(Mono.defer(() -> held.isOverflowed() ? Mono.empty() : recordAndSend(recording, held.bytes())))
			.doOnDiscard(DataBuffer.class, DataBufferUtils::release)
			.doOnCancel(() -> {
				held.release();
				recording.endNotStored("the exchange was cancelled while its response was written");
			})
			.doOnError((ex) -> {
				held.release();
				recording.endNotStored("writing its response failed");
			});
		return super.writeWith(sent);
	}

	private Mono<DataBuffer> recordAndSend(Recording recording, byte[] bytes) {
		return record(recording, bytes).then(Mono.defer(() -> {
			getHeaders().setContentLength(bytes.length);
			return (bytes.length > 0) ? Mono.just(bufferFactory().wrap(bytes)) : Mono.empty();
		}));
	}

	@Override
	public Mono<Void> writeAndFlushWith(Publisher<? extends Publisher<? extends DataBuffer>> body) {
		return Mono.defer(() -> {
			State state = this.state.get();
			if (state instanceof Replaying replaying) {
				return Flux.from(body)
					.flatMap(Flux::from)
					.doOnNext(DataBufferUtils::release)
					.then(Mono.defer(() -> writeReplay(replaying)));
			}
			if (state instanceof Recording recording && this.state.compareAndSet(recording, Done.INSTANCE)) {
				return stored(recording.endNotStored("its response was a stream, sent as it came"))
					.then(Mono.defer(() -> super.writeAndFlushWith(body)));
			}
			return super.writeAndFlushWith(body);
		});
	}

	@Override
	public Mono<Void> writeWith(Path file, long position, long count) {
		if (this.state.get() == null && getDelegate() instanceof ZeroCopyHttpOutputMessage zeroCopy) {
			return zeroCopy.writeWith(file, position, count);
		}
		return writeWith(DataBufferUtils.takeUntilByteCount(
				DataBufferUtils.read(new FileSystemResource(file), position, bufferFactory(), 8192), count));
	}

	@Override
	public Mono<Void> setComplete() {
		return Mono.defer(() -> {
			State state = this.state.get();
			if (state instanceof Replaying replaying) {
				return writeReplay(replaying);
			}
			if (state instanceof Recording recording && this.state.compareAndSet(recording, Done.INSTANCE)) {
				return record(recording, new byte[0])
					.doOnCancel(() -> recording.endNotStored("the exchange was cancelled"))
					.doOnError((ex) -> recording.endNotStored("writing its response failed"))
					.then(Mono.defer(super::setComplete));
			}
			return super.setComplete();
		});
	}

	// For a handler result that wrote nothing, as a replay's stand-in.
	Mono<Void> finish() {
		return (this.state.get() != null) ? setComplete() : Mono.empty();
	}

	// A call whose method still runs ends when it returns: its recorder finds this done.
	void abandon() {
		State state = this.state.getAndUpdate((current) -> (current instanceof Replaying) ? current : Done.INSTANCE);
		if (state instanceof Recording recording) {
			recording.endNotStored("the exchange ended before its response was written");
		}
	}

	private int status() {
		HttpStatusCode status = getStatusCode();
		return (status != null) ? status.value() : HttpStatus.OK.value();
	}

	private Mono<Void> record(Recording recording, byte[] body) {
		int code = status();
		if (body.length > this.limit) {
			return stored(recording.endNotStored("its response body was larger than idempotent.max-result-size"));
		}
		RecordedResponse response = new RecordedResponse(code, recordedHeaders(recording.before), body);
		return stored(recording.end(response));
	}

	// The commit's own actions must not run on the thread that read the store's reply.
	private Mono<Void> stored(CompletableFuture<Void> ended) {
		return Mono.fromFuture(ReactiveIdempotentCalls.resumeOn(ended, this.resume));
	}

	private Map<String, List<String>> recordedHeaders(Map<String, List<String>> before) {
		HttpHeaders current = getHeaders();
		RecordedHeaders headers = new RecordedHeaders(this.replayedHeaders, current.getFirst(HttpHeaders.CONTENT_TYPE));
		current.forEach((name, values) -> {
			if (!values.contains(null) && !values.equals(before.get(name))) {
				headers.add(name, values);
			}
		});
		return headers.toMap();
	}

	private static Map<String, List<String>> snapshot(HttpHeaders headers) {
		Map<String, List<String>> snapshot = new LinkedHashMap<>();
		headers.forEach((name, values) -> snapshot.put(name, new ArrayList<>(values)));
		return snapshot;
	}

	private Mono<Void> writeReplay(Replaying replaying) {
		if (!this.state.compareAndSet(replaying, Done.INSTANCE)) {
			return Mono.empty();
		}
		// Again, over what the stand-in's handling may have applied or removed.
		setStatusCode(HttpStatusCode.valueOf(replaying.response.status()));
		String contentType = replaying.response.contentType();
		if (contentType != null) {
			getHeaders().set(HttpHeaders.CONTENT_TYPE, contentType);
		}
		return writeBytes(replaying.response.body());
	}

	private Mono<Void> writeBytes(byte[] bytes) {
		getHeaders().setContentLength(bytes.length);
		if (bytes.length == 0) {
			return super.setComplete();
		}
		return super.writeWith(Mono.fromSupplier(() -> bufferFactory().wrap(bytes)));
	}

	private static final class HeldBuffers {

		private final long limit;

		private final List<DataBuffer> buffers = new ArrayList<>();

		private long size;

		private volatile boolean overflowed;

		HeldBuffers(long limit) {
			this.limit = limit;
		}

		synchronized boolean hold(DataBuffer buffer) {
			if (this.size + buffer.readableByteCount() <= this.limit) {
				this.buffers.add(buffer);
				this.size += buffer.readableByteCount();
				return true;
			}
			this.overflowed = true;
			return false;
		}

		boolean isOverflowed() {
			return this.overflowed;
		}

		synchronized Flux<DataBuffer> spill(DataBuffer next) {
			List<DataBuffer> spilled = new ArrayList<>(this.buffers);
			spilled.add(next);
			this.buffers.clear();
			return Flux.fromIterable(spilled);
		}

		synchronized byte[] bytes() {
			byte[] bytes = new byte[(int) this.size];
			int position = 0;
			for (DataBuffer buffer : this.buffers) {
				int length = buffer.readableByteCount();
				buffer.read(bytes, position, length);
				position += length;
				DataBufferUtils.release(buffer);
			}
			this.buffers.clear();
			return bytes;
		}

		synchronized void release() {
			this.buffers.forEach(DataBufferUtils::release);
			this.buffers.clear();
		}

	}

	private sealed interface State permits Recording, Replaying, Done {

	}

	// Released when the handler's result failed, whatever was written.
	private record Recording(OwnerHandle owner, Map<String, List<String>> before, RecordingServerHttpResponse response,
			AtomicBoolean ended) implements State {

		Recording(OwnerHandle owner, Map<String, List<String>> before, RecordingServerHttpResponse response) {
			this(owner, before, response, new AtomicBoolean());
		}

		CompletableFuture<Void> end(RecordedResponse recorded) {
			if (!this.ended.compareAndSet(false, true)) {
				return CompletableFuture.completedFuture(null);
			}
			Throwable failure = this.response.failure;
			return (failure != null) ? this.owner.releaseAsync(failure) : this.owner.completeRecordedAsync(recorded);
		}

		CompletableFuture<Void> endNotStored(String why) {
			if (!this.ended.compareAndSet(false, true)) {
				return CompletableFuture.completedFuture(null);
			}
			Throwable failure = this.response.failure;
			return (failure != null) ? this.owner.releaseAsync(failure)
					: this.owner.completeNotStoredAsync(this.response.status(), why);
		}

	}

	private record Replaying(RecordedResponse response) implements State {

	}

	private enum Done implements State {

		INSTANCE

	}

}
