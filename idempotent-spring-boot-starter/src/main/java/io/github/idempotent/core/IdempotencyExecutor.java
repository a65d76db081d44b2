package io.github.idempotent.core;

import java.io.OutputStream;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Consumer;
import java.util.function.Supplier;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;
import org.springframework.util.ClassUtils;
import reactor.util.context.ContextView;
import reactor.core.scheduler.Schedulers;
import reactor.core.scheduler.Scheduler;
import reactor.core.publisher.Mono;
import io.netty.util.internal.ThreadExecutorMap;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.util.Assert;
import org.springframework.util.StringUtils;
import org.springframework.util.function.SingletonSupplier;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.observation.IdempotencyObservationConvention;

import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.RecordKey;

/**
 * Runs a guarded call at most once per key: claims the key, runs the method while its
 * lease is renewed, stores the outcome and replays it to later calls with the key. The
 * one entry of {@code @Idempotent}, the web layer and {@link IdempotencyTemplate}, which
 * also checks and scopes keys, fingerprints payloads and observes calls. The
 * auto-configuration applies the {@code idempotent.*} properties to every executor bean.
 */
public class IdempotencyExecutor implements AutoCloseable {

	/** Longest scope: a principal name or a tenant id, never a payload. */
	public static final int MAX_SCOPE_LENGTH = 1024;

	private final IdempotencyThreads threads;

	private final IdempotencyProtocol protocol;

	private final IdempotencyObserver observer;

	private Fingerprinter fingerprinter = new Fingerprinter(new JsonMapper(), null);

	private String keyPrefix = "idempotent";

	private int maxKeyLength = 255;

	private OperationDefaults operationDefaults = OperationDefaults.DEFAULT;

	private volatile @Nullable CallObservations observations;

	private volatile IdempotentOperationSource operations;

	/** An executor with its own watchdog and renewal threads, stopped by close. */
	public IdempotencyExecutor(IdempotencyStore store, FailureMode failureMode, long maxResultSize,
			IdempotencyObserver observer) {
		this(store, failureMode, maxResultSize, null, observer, true);
	}

	/** An executor timed by {@code watchdog}, which it does not stop. */
	public IdempotencyExecutor(IdempotencyStore store, FailureMode failureMode, long maxResultSize,
			ScheduledExecutorService watchdog, IdempotencyObserver observer) {
		this(store, failureMode, maxResultSize, watchdog, observer, false);
	}

	private IdempotencyExecutor(IdempotencyStore store, FailureMode failureMode, long maxResultSize,
			@Nullable ScheduledExecutorService watchdog, IdempotencyObserver observer, boolean ownsWatchdog) {
		Assert.notNull(store, "store must not be null");
		Assert.notNull(failureMode, "failureMode must not be null");
		Assert.isTrue(maxResultSize > 0, "maxResultSize must be positive");
		Assert.isTrue(ownsWatchdog || watchdog != null, "watchdog must not be null");
		Assert.notNull(observer, "observer must not be null");
		this.threads = new IdempotencyThreads(watchdog);
		this.protocol = new IdempotencyProtocol(store, this.threads, failureMode, maxResultSize);
		this.observer = IdempotencyObserver.failSafe(observer);
		this.operations = new IdempotentOperationSource(this,
				SingletonSupplier.of(() -> new JacksonResultCodec(new JsonMapper(), List.of())), null);
	}

	/**
	 * Ends each waiting duplicate at its next claim, as if the store were unavailable;
	 * running calls go on until {@link #close}.
	 */
	public void stopWaiting() {
		this.threads.stopping = true;
	}

	/** Stops the renewal threads, and the lease watchdog if this executor created it. */
	@Override
	public void close() {
		this.threads.close();
	}

	/**
	 * How {@code @Idempotent} methods are read: return types checked against the codec,
	 * asked for when a method is read (the codec's converters may need this executor),
	 * placeholders resolved by {@code beanFactory}. Set before any is read.
	 */
	public void setOperationParsing(Supplier<ResultCodec> codec, @Nullable ConfigurableBeanFactory beanFactory) {
		Assert.state(this.operations.operationNames().isEmpty(), "@Idempotent methods were read already");
		this.operations = new IdempotentOperationSource(this, codec, beanFactory);
	}

	/**
	 * The operation of an {@code @Idempotent} method, read on its first call, settings it
	 * names none of from this executor; {@code null} if it is not annotated.
	 */
	public @Nullable IdempotentOperation operation(Method method, @Nullable Class<?> targetClass) {
		return this.operations.get(method, targetClass);
	}

	/**
	 * The operation of a handler that a configured route guards, read as if it carried
	 * {@code settings}: adding the annotation later keeps its name.
	 */
	public IdempotentOperation routedOperation(Method method, Class<?> targetClass, Idempotent settings) {
		return this.operations.routed(method, targetClass, settings);
	}

	/** Names of the operations read so far, annotated and routed. */
	public Set<String> operationNames() {
		return this.operations.operationNames();
	}

	IdempotentOperationSource operations() {
		return this.operations;
	}

	public IdempotencyStore getStore() {
		return this.protocol.store.store;
	}

	/** Largest encoded result it stores; the web layer records no larger response. */
	public long getMaxResultSize() {
		return this.protocol.maxResultSize;
	}

	/**
	 * Runs {@code invocation} at most once per key and returns its result, or the stored
	 * one. {@code clientKey} is the key as the caller sent it; {@code key} the store's.
	 * With a {@code capture}, the caller records the outcome itself (an HTTP response as
	 * written) and writes replays: the answer is put into the capture.
	 */
	public @Nullable Object execute(IdempotencyPolicy policy, String clientKey, RecordKey key, Fingerprint fingerprint,
			Invocation invocation, @Nullable ResponseCapture capture) throws Throwable {
		try (Admission call = admit(policy, clientKey, key, fingerprint, capture)) {
			if (call.isAnswered()) {
				return call.answer();
			}
			Object result;
			try {
				result = invocation.proceed();
			}
			catch (Throwable ex) {
				call.failed(ex);
				throw ex;
			}
			call.returned(result);
			return result;
		}
	}

	/**
	 * Claims the key for a method the caller runs itself on this thread, waiting while a
	 * duplicate is in progress; throws the refusals {@link #execute} throws. The caller
	 * runs the method unless the call {@link Admission#isAnswered is answered}, reports
	 * how it ended and closes the call, on this thread.
	 */
	public Admission admit(IdempotencyPolicy policy, String clientKey, RecordKey key, Fingerprint fingerprint,
			@Nullable ResponseCapture capture) throws Throwable {
		return BlockingCall.admit(this.protocol, call(policy, clientKey, key, fingerprint, null, capture, true));
	}

	/** Told to the executor's observer, then to the observation it starts. */
	ProtocolCall call(IdempotencyPolicy policy, String clientKey, RecordKey key, Fingerprint fingerprint,
			@Nullable Object parent, @Nullable ResponseCapture capture, boolean blocking) {
		// Before the observation starts: an observer that throws here leaves none open.
		IdempotencyObserver own = blocking ? this.observer : this.observer.forAsyncCall();
		CallObservations observations = this.observations;
		CallObservations.Call observed = (observations != null) ? observations.start(policy, clientKey, parent) : null;
		IdempotencyObserver observer = (observed == null) ? own
				: IdempotencyObserver.composite(List.of(own, IdempotencyObserver.failSafe(observed)));
		return new ProtocolCall(policy, clientKey, key, fingerprint, observer, observed, capture, blocking);
	}

	/**
	 * Runs an {@code invocation} that returns a future at most once per key. The first
	 * claim and the method run on the calling thread; the key is completed or released
	 * when the future completes. Refusals complete the returned future exceptionally;
	 * cancelling it only detaches the caller (docs/guide.md, "Return values"). A
	 * {@code capture} as {@link #execute} takes it.
	 */
	public CompletableFuture<@Nullable Object> executeAsync(IdempotencyPolicy policy, String clientKey, RecordKey key,
			Fingerprint fingerprint, AsyncInvocation invocation, @Nullable ResponseCapture capture) {
		ProtocolCall call = call(policy, clientKey, key, fingerprint, null, capture, false);
		return CallObservations.observe(call.observed, () -> {
			try (Observation.Scope scope = (call.observed != null) ? call.observed.observation.openScope() : null) {
				return new CompletionStageCall(this.protocol, call, invocation, this.threads.blockingStoreExecutor)
					.start();
			}
		});
	}

	/**
	 * {@link #executeAsync} with the first claim asynchronous too (an event loop),
	 * continued on {@code subscriberThread}.
	 */
	CompletableFuture<@Nullable Object> executeNonBlocking(ProtocolCall call, AsyncInvocation invocation,
			Executor subscriberThread) {
		return CallObservations.observe(call.observed,
				() -> new CompletionStageCall(this.protocol, call, invocation, subscriberThread).startNonBlocking());
	}

	/** Runs the steps of a store without async support for async calls. */
	public void setBlockingStoreExecutor(Executor blockingStoreExecutor) {
		Assert.notNull(blockingStoreExecutor, "blockingStoreExecutor must not be null");
		this.threads.blockingStoreExecutor = blockingStoreExecutor;
	}

	/**
	 * Deflates stored results larger than {@code thresholdBytes}; negative for none.
	 * Compressed records are replayed whatever this setting.
	 */
	public void setResultCompressionThreshold(long thresholdBytes) {
		this.protocol.resultCompression = (thresholdBytes >= 0) ? ResultCompression.deflate(thresholdBytes)
				: ResultCompression.none();
	}

	/** Fingerprints with {@code mapper}, keyed by {@code secret} unless it is null. */
	public void setFingerprinting(JsonMapper mapper, @Nullable String secret) {
		this.fingerprinter = new Fingerprinter(mapper, secret);
	}

	public void setKeyPrefix(String keyPrefix) {
		Assert.hasText(keyPrefix, "keyPrefix must not be empty");
		this.keyPrefix = keyPrefix;
	}

	public String getKeyPrefix() {
		return this.keyPrefix;
	}

	public void setMaxKeyLength(int maxKeyLength) {
		Assert.isTrue(maxKeyLength > 0, "maxKeyLength must be positive");
		this.maxKeyLength = maxKeyLength;
	}

	/**
	 * The settings of every operation that names none of its own ({@code idempotent.*});
	 * a {@code null} {@code inProcessWaitFor} is one lease.
	 */
	public void setOperationDefaults(Duration ttl, Duration lease, Duration waitFor,
			@Nullable Duration inProcessWaitFor, Duration retryAfter, Duration maxDuration,
			ReleasedStatuses releaseOnStatus) {
		this.operationDefaults = new OperationDefaults(ttl, lease, waitFor, inProcessWaitFor, retryAfter, maxDuration,
				releaseOnStatus);
	}

	OperationDefaults operationDefaults() {
		return this.operationDefaults;
	}

	/** Observes each call in {@code registry}; {@code includeKey} puts keys on spans. */
	public void observeWith(ObservationRegistry registry, @Nullable IdempotencyObservationConvention convention,
			boolean includeKey) {
		this.observations = new CallObservations(registry, getStore(), convention, includeKey);
	}

	/**
	 * Refuses a key that is not printable or too long: a 400, not a 503. {@code builder}:
	 * what in the application built the key, or {@code null} for a key the caller sent.
	 */
	public void checkKey(String operation, String key, @Nullable String builder) {
		validate(operation, "key", key, this.maxKeyLength, builder);
	}

	/**
	 * The record key {@code {prefix}:{scope}:{name}:{key}}, hashed if longer than the
	 * store keeps; the scope is checked as {@link #checkKey} checks a key.
	 */
	public RecordKey recordKey(String operation, String scope, String key) {
		if (!StringUtils.hasText(scope)) {
			// Every caller the resolver does not know would share this one scope.
			throw new IdempotencyScopeException("The scope of " + operation + " is blank: the "
					+ "IdempotencyScopeResolver answered \"" + scope + "\". Return a scope for every caller, or throw "
					+ "IdempotencyScopeException for a caller it cannot tell; return IdempotencyScopeResolver.GLOBAL "
					+ "where callers are meant to share their keys");
		}
		validate(operation, "scope", scope, MAX_SCOPE_LENGTH, "its scope resolver or scope expression");
		return RecordKey.of(this.keyPrefix, scope, operation, key, getStore().maxKeyLength());
	}

	/** A payload's fingerprint; one the mapper cannot write names {@code remedy}. */
	public Fingerprint fingerprint(@Nullable Object payload, String owner, String remedy) {
		try {
			return this.fingerprinter.fingerprint(payload);
		}
		catch (JacksonException ex) {
			throw new IdempotencyPayloadException(
					"Cannot fingerprint the payload of " + owner + ": " + ex.getOriginalMessage() + ". " + remedy, ex);
		}
	}

	/** Fingerprints the bytes of an HTTP request as received, keyed as payloads are. */
	public FingerprintStream fingerprintStream() {
		return this.fingerprinter.stream();
	}

	/**
	 * The bytes of one input, then its {@link #fingerprint()}. Never closed, so that a
	 * writer may close what it writes to (Jackson does) and write again.
	 */
	public static final class FingerprintStream extends OutputStream {

		private static final Base64.Encoder BASE64 = Base64.getUrlEncoder().withoutPadding();

		private final Consumer<ByteBuffer> update;

		private final Supplier<byte[]> result;

		FingerprintStream(Consumer<ByteBuffer> update, Supplier<byte[]> result) {
			this.update = update;
			this.result = result;
		}

		@Override
		public void write(int b) {
			this.update.accept(ByteBuffer.wrap(new byte[] { (byte) b }));
		}

		@Override
		public void write(byte[] b, int off, int len) {
			this.update.accept(ByteBuffer.wrap(b, off, len));
		}

		/** The fingerprint of what was written; the stream is used up. */
		public Fingerprint fingerprint() {
			return new Fingerprint(BASE64.encodeToString(this.result.get()));
		}

	}

	/**
	 * A call {@link #admit admitted} on the calling thread: answered (the stored result,
	 * or {@code null} for a skipped duplicate or a replay put into the capture), or for
	 * the caller to run, report and close, in a try-with-resources around the method.
	 */
	public interface Admission extends AutoCloseable {

		/** Whether the method must not run: {@link #answer} is the call's result. */
		boolean isAnswered();

		@Nullable Object answer();

		/** Stores the method's result, or hands the hold to the capture. */
		void returned(@Nullable Object result);

		/** Releases the key, or stores {@code failure} when {@code cacheFor} lists it. */
		void failed(Throwable failure);

		/** Ends the call; one whose outcome was not reported releases its key. */
		@Override
		void close();

	}

	/** A guarded method whose result is a future (a {@code Mono} is adapted to one). */
	@FunctionalInterface
	public interface AsyncInvocation {

		@Nullable CompletionStage<?> proceed() throws Throwable;

	}

	@FunctionalInterface
	public interface Invocation {

		Object proceed() throws Throwable;

	}

	/**
	 * Refuses a key or scope a store could not keep apart from another (Redis writes a
	 * lone surrogate as '?') as the caller's 400, not a store failure; validated values
	 * are safe to log.
	 * @param builder what in the application built the value, or {@code null} for a key
	 * the caller sent: only that caller is told to send a shorter one
	 */
	private static void validate(String operation, String what, String value, int maxLength, @Nullable String builder) {
		if (value.length() > maxLength) {
			String tooLong = " is " + value.length() + " characters, longer than ";
			String limit = what.equals("key") ? " (idempotent.max-key-length)" : "";
			throw (builder != null)
					? new IdempotencyKeyException("Idempotency " + what + tooLong + "the " + maxLength + " allowed",
							"Idempotency " + what + " of " + operation + ", built by " + builder + "," + tooLong
									+ maxLength + limit + "; build a shorter one (a hash of it, say)")
					: new IdempotencyKeyException(
							"Idempotency " + what + tooLong + "the " + maxLength
									+ " allowed; send a shorter key, such as a UUID",
							"Idempotency " + what + " of " + operation + tooLong + maxLength + limit
									+ "; the caller is told to send a shorter key, such as a UUID");
		}
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			boolean bad;
			if (Character.isHighSurrogate(c)) {
				bad = i + 1 >= value.length() || !Character.isLowSurrogate(value.charAt(i + 1));
				i++;
			}
			else {
				bad = Character.isLowSurrogate(c) || Character.isISOControl(c);
			}
			if (bad) {
				throw new IdempotencyKeyException(
						"Idempotency " + what + " must be printable text; character " + (i + 1)
								+ " is a control character or a broken surrogate pair. Send a key such as a UUID",
						"Idempotency " + what + " of " + operation + " has a control character or "
								+ "a broken surrogate pair at position " + (i + 1));
			}
		}
	}

	/** The hold on a key whose call returned and whose response is being written. */
	public interface Hold {

		/**
		 * Releases the key when the call {@code failed} (unless {@code cacheFor} stores
		 * it) or {@code status} releases it; else stores {@code response}, or, if null,
		 * that the call completed and why its response is not ({@code unrecordable}).
		 * @return completes once the store has answered
		 */
		CompletableFuture<Void> end(int status, @Nullable RecordedResponse response, @Nullable String unrecordable,
				@Nullable Throwable failed);

	}

	/**
	 * Passed by the web layer with a call; the executor puts its answer in it: the
	 * owner's {@link Hold}, to end once the response is written, or the replay to write.
	 */
	public static final class ResponseCapture {

		private @Nullable Hold hold;

		// Set by the protocol; read on every write of a held response: no lock.
		volatile @Nullable Replay replay;

		// A stored exception rethrown: read as its error response is written.
		volatile boolean replayedFailure;

		private boolean taken;

		// False once the request is over: the executor then ends the hold itself. A
		// handler forwarding to another guarded one holds two keys, ended together.
		synchronized boolean offer(Hold hold) {
			if (this.taken) {
				return false;
			}
			Hold first = this.hold;
			this.hold = (first == null) ? hold
					: (status, response, unrecordable, failed) -> CompletableFuture.allOf(
							Futures.call(() -> first.end(status, response, unrecordable, failed)),
							Futures.call(() -> hold.end(status, response, unrecordable, failed)));
			return true;
		}

		/** Whether the call replays a stored response or rethrows a stored exception. */
		public boolean isReplay() {
			return this.replay != null || this.replayedFailure;
		}

		/** The stored response to write instead of the method's, if any. */
		public @Nullable Replay replay() {
			return this.replay;
		}

		/** Whether the method ran and its hold waits to be taken. */
		public synchronized boolean isHeld() {
			return this.hold != null;
		}

		/**
		 * The hold to end once the response is written, or {@code null} if none (yet); a
		 * later one is ended by the executor without storing a response.
		 */
		public synchronized @Nullable Hold take() {
			this.taken = true;
			Hold hold = this.hold;
			this.hold = null;
			return hold;
		}

		/** A replay; {@code operation} and {@code key} are for the replay customizers. */
		public record Replay(String operation, String key, RecordedResponse response) {
		}

	}

	/**
	 * The executor's entry for calls whose result is a {@code Mono}; apart, so that it is
	 * loaded only with Reactor. Only the owner subscribes the {@code Mono}, apart from
	 * the caller's subscription, so a cancelled caller leaves a started call running.
	 */
	public static final class ReactiveCalls {

		private static final boolean nettyPresent = ClassUtils.isPresent("io.netty.util.internal.ThreadExecutorMap",
				ReactiveCalls.class.getClassLoader());

		private ReactiveCalls() {
		}

		/** Runs the {@code Mono} that {@code call} creates at most once per key. */
		public static Mono<?> execute(IdempotencyExecutor executor, IdempotencyPolicy policy, String clientKey,
				RecordKey key, Fingerprint fingerprint, Supplier<? extends Mono<?>> call, ContextView contextView,
				@Nullable ResponseCapture capture) {
			try {
				ProtocolCall protocolCall = executor.call(policy, clientKey, key, fingerprint,
						contextView.getOrDefault(CallObservations.REACTOR_CONTEXT_KEY, null), capture, false);
				CallObservations.Call observed = protocolCall.observed;
				// suppressCancel: a cancelled subscriber leaves the call running.
				return Mono.fromFuture(executor.executeNonBlocking(protocolCall, () -> {
					try (Observation.Scope scope = (observed != null) ? observed.observation.openScope() : null) {
						Mono<?> mono = withIdempotencyContext(call.get());
						// Written inside the subscriber's context, so that this
						// observation, not the subscriber's, is the Mono's parent.
						return ((observed != null) ? mono.contextWrite((methodContext) -> methodContext
							.put(CallObservations.REACTOR_CONTEXT_KEY, observed.observation)) : mono)
							.contextWrite(contextView)
							.toFuture();
					}
				}, subscriberThread()), true);
			}
			catch (RuntimeException | Error ex) {
				return Mono.error(ex);
			}
		}

		/** Read while the executor has it bound: the operators run on other threads. */
		private static Mono<?> withIdempotencyContext(Mono<?> mono) {
			IdempotencyContext current = IdempotencyContext.current().orElse(null);
			return (current != null)
					? mono.contextWrite(
							(methodContext) -> methodContext.put(IdempotencyContext.REACTOR_CONTEXT_KEY, current))
					: mono;
		}

		/**
		 * {@code reply}, signalled on {@code resume} rather than the client's I/O thread.
		 */
		public static <T> CompletableFuture<T> resumeOn(CompletableFuture<T> reply, Executor resume) {
			return reply.isDone() ? reply : reply.whenCompleteAsync((value, failure) -> {
			}, resume);
		}

		/**
		 * Where work continues after a store's reply: this event loop, else a scheduler.
		 */
		public static Executor subscriberThread() {
			Executor eventLoop = nettyPresent ? NettyEventLoops.current() : null;
			if (eventLoop != null) {
				// Shutting down with the server: a thread that may block finishes.
				return Futures.orElse(eventLoop, on(Schedulers.boundedElastic()));
			}
			return on(Schedulers.isInNonBlockingThread() ? Schedulers.parallel() : Schedulers.boundedElastic());
		}

		/** Disposed with the application, the call ends where its reply arrived. */
		private static Executor on(Scheduler scheduler) {
			return Futures.orElse(scheduler::schedule, Runnable::run);
		}

		/** Apart, so that Netty is loaded only when present. */
		private static final class NettyEventLoops {

			static @Nullable Executor current() {
				return ThreadExecutorMap.currentExecutor();
			}

		}

	}

}
