package io.github.idempotent.core;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;

import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;

import io.github.idempotent.store.AsyncIdempotencyStore;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.RecordKey;

/**
 * Runs a guarded call at most once per key, whatever its method returns: claims the key,
 * runs the method while a watchdog renews the lease, stores its outcome and replays it to
 * later calls with the key. The protocol is {@link IdempotencyProtocol}; its log category
 * is this class's.
 */
public class IdempotencyExecutor implements AutoCloseable {

	private final IdempotencyThreads threads;

	private final IdempotencyProtocol protocol;

	private final IdempotencyObserver observer;

	/**
	 * Creates an executor with its own watchdog and renewal threads, stopped by
	 * {@link #close()}.
	 */
	public IdempotencyExecutor(IdempotencyStore store, FailureMode failureMode, long maxResultSize,
			IdempotencyObserver observer) {
		this(store, failureMode, maxResultSize, null, observer, true);
	}

	/**
	 * Creates an executor whose renewals are timed by {@code watchdog}, which it does not
	 * stop; they run on threads of its own, so that a slow store never delays the timer.
	 */
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
		IdempotencyThreads threads = (watchdog != null) ? new IdempotencyThreads(watchdog) : new IdempotencyThreads();
		this.threads = threads;
		this.protocol = new IdempotencyProtocol(new StoreAccess(store, threads), threads, failureMode, maxResultSize);
		this.observer = IdempotencyObserver.failSafe(observer);
	}

	/**
	 * Ends every duplicate waiting for a call in progress, at its next claim, with
	 * {@link IdempotencyStoreUnavailableException}, so that shutdown does not wait for
	 * it. Running calls go on and are stored until {@link #close()}.
	 */
	public void stopWaiting() {
		this.threads.stopWaiting();
	}

	/**
	 * Stops the renewal threads, and the lease watchdog if this executor created it.
	 */
	@Override
	public void close() {
		this.threads.close();
	}

	public IdempotencyStore getStore() {
		return this.protocol.store().store();
	}

	/**
	 * Runs {@code invocation} at most once per key and returns its result, or the stored
	 * result of the call that ran.
	 * @param clientKey the key as the caller sent it, for messages
	 * @param key the scoped store key
	 */
	public Object execute(IdempotencyPolicy policy, String clientKey, RecordKey key, Fingerprint fingerprint,
			Invocation invocation) throws Throwable {
		return execute(policy, clientKey, key, fingerprint, invocation, this.observer, null);
	}

	/**
	 * {@link #execute}, also told to {@code callObserver}; when {@code recorder} is
	 * given, the outcome is stored as it records it (an HTTP response) and replayed by
	 * it.
	 */
	public Object execute(IdempotencyPolicy policy, String clientKey, RecordKey key, Fingerprint fingerprint,
			Invocation invocation, IdempotencyObserver callObserver, @Nullable OutcomeRecorder recorder)
			throws Throwable {
		Assert.notNull(callObserver, "callObserver must not be null");
		IdempotencyObserver observer = (callObserver == IdempotencyObserver.NONE || callObserver == this.observer)
				? this.observer
				: IdempotencyObserver.composite(List.of(this.observer, IdempotencyObserver.failSafe(callObserver)));
		return BlockingCall.execute(this.protocol,
				new ProtocolCall(policy, clientKey, key, fingerprint, observer, recorder, true), invocation);
	}

	/**
	 * Runs an {@code invocation} that returns a future at most once per key. The first
	 * claim is made on the calling thread, so the method runs there with its thread-bound
	 * context; the key is completed or released when the future completes. A duplicate in
	 * progress waits without holding a thread, and a re-claim that wins runs the method
	 * on the blocking-store threads, never on the store client's. Refusals complete the
	 * returned future exceptionally; cancelling it detaches the caller without stopping a
	 * method that has started (docs/guide.md, "Return values").
	 */
	public CompletableFuture<@Nullable Object> executeAsync(IdempotencyPolicy policy, String clientKey, RecordKey key,
			Fingerprint fingerprint, AsyncInvocation invocation) {
		return executeAsync(policy, clientKey, key, fingerprint, invocation, IdempotencyObserver.NONE, null);
	}

	/**
	 * {@link #executeAsync} with a call observer and a recorder, as {@link #execute}.
	 */
	public CompletableFuture<@Nullable Object> executeAsync(IdempotencyPolicy policy, String clientKey, RecordKey key,
			Fingerprint fingerprint, AsyncInvocation invocation, IdempotencyObserver callObserver,
			@Nullable OutcomeRecorder recorder) {
		return asyncCall(policy, clientKey, key, fingerprint, invocation, callObserver, recorder,
				this.threads.blockingStoreExecutor())
			.start();
	}

	/**
	 * {@link #executeAsync} without blocking the calling thread at all (an event loop):
	 * the first claim is asynchronous too.
	 */
	public CompletableFuture<@Nullable Object> executeNonBlocking(IdempotencyPolicy policy, String clientKey,
			RecordKey key, Fingerprint fingerprint, AsyncInvocation invocation) {
		return executeNonBlocking(policy, clientKey, key, fingerprint, invocation, IdempotencyObserver.NONE, null);
	}

	/**
	 * {@link #executeNonBlocking} with a call observer and a recorder, as
	 * {@link #execute}.
	 */
	public CompletableFuture<@Nullable Object> executeNonBlocking(IdempotencyPolicy policy, String clientKey,
			RecordKey key, Fingerprint fingerprint, AsyncInvocation invocation, IdempotencyObserver callObserver,
			@Nullable OutcomeRecorder recorder) {
		return executeNonBlocking(policy, clientKey, key, fingerprint, invocation, callObserver, recorder,
				this.threads.blockingStoreExecutor());
	}

	/**
	 * {@link #executeNonBlocking} that continues on {@code subscriberThread} after each
	 * of the store's replies.
	 */
	CompletableFuture<@Nullable Object> executeNonBlocking(IdempotencyPolicy policy, String clientKey, RecordKey key,
			Fingerprint fingerprint, AsyncInvocation invocation, IdempotencyObserver callObserver,
			@Nullable OutcomeRecorder recorder, Executor subscriberThread) {
		return asyncCall(policy, clientKey, key, fingerprint, invocation, callObserver, recorder, subscriberThread)
			.startNonBlocking();
	}

	private CompletionStageCall asyncCall(IdempotencyPolicy policy, String clientKey, RecordKey key,
			Fingerprint fingerprint, AsyncInvocation invocation, IdempotencyObserver callObserver,
			@Nullable OutcomeRecorder recorder, Executor handoff) {
		Assert.notNull(callObserver, "callObserver must not be null");
		IdempotencyObserver observer = (callObserver == IdempotencyObserver.NONE) ? this.observer.forAsyncCall()
				: IdempotencyObserver
					.composite(List.of(this.observer.forAsyncCall(), IdempotencyObserver.failSafe(callObserver)));
		return new CompletionStageCall(this.protocol,
				new ProtocolCall(policy, clientKey, key, fingerprint, observer, recorder, false), invocation, handoff);
	}

	/**
	 * Sets the executor that runs a blocking store's steps for asynchronous calls (a
	 * store without {@link AsyncIdempotencyStore} support).
	 */
	public void setBlockingStoreExecutor(Executor blockingStoreExecutor) {
		this.threads.setBlockingStoreExecutor(blockingStoreExecutor);
	}

	/**
	 * Sets how results are compressed before they are stored; none unless set. Compressed
	 * records are replayed whatever this setting.
	 */
	public void setResultCompression(ResultCompression resultCompression) {
		Assert.notNull(resultCompression, "resultCompression must not be null");
		this.protocol.setResultCompression(resultCompression);
	}

	/**
	 * Whether an exception type can be recreated from a stored outcome, which
	 * {@code cacheFor} requires.
	 */
	public static boolean isRecreatable(Class<? extends Throwable> type) {
		return StoredOutcome.isRecreatable(type);
	}

	/**
	 * A guarded method whose result arrives later, as a future (a {@code Mono} is adapted
	 * to one).
	 */
	@FunctionalInterface
	public interface AsyncInvocation {

		@Nullable CompletionStage<?> proceed() throws Throwable;

	}

	/**
	 * The guarded method.
	 */
	@FunctionalInterface
	public interface Invocation {

		Object proceed() throws Throwable;

	}

}
