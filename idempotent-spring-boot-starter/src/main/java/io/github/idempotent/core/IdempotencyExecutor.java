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
 * Runs a guarded call at most once per key, whatever its method returns: claims the key
 * atomically, runs the method once while a watchdog renews the lease, stores its outcome,
 * and replays it to every later call with the same key.
 * <p>
 * The protocol is written once, in {@link IdempotencyProtocol}, over the
 * {@link OwnerHandle} the winner of a claim holds; this class picks the adapter that
 * carries it out for the kind of result: {@link BlockingCall} for a value returned on the
 * calling thread, {@link CompletionStageCall} for a future (and for a {@code Mono}, which
 * callers adapt to one). Its threads are {@link IdempotencyThreads}; what is stored is
 * written by {@link StoredOutcome}. Its log category, {@code IdempotencyExecutor}, is the
 * protocol's.
 */
public class IdempotencyExecutor implements AutoCloseable {

	private final IdempotencyThreads threads;

	private final IdempotencyProtocol protocol;

	private final IdempotencyObserver observer;

	/**
	 * Creates an executor with its own lease watchdog thread and renewal threads, stopped
	 * by {@link #close()}.
	 */
	public IdempotencyExecutor(IdempotencyStore store, FailureMode failureMode, long maxResultSize,
			IdempotencyObserver observer) {
		this(store, failureMode, maxResultSize, null, observer, true);
	}

	/**
	 * Creates an executor whose lease renewals are timed by {@code watchdog}, which it
	 * does not stop; the renewals themselves run on threads of the executor's own,
	 * stopped by {@link #close()}, so that a slow store never delays the timer.
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
	 * Ends every duplicate that waits for a call in progress, at its next claim, with
	 * {@link IdempotencyStoreUnavailableException} (503 and {@code Retry-After}, or the
	 * message again later), instead of letting it wait while the application shuts down:
	 * its retry finds the outcome, here or on another instance. Calls that run go on, and
	 * are stored, until {@link #close()}.
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
	 * @param policy the operation's settings
	 * @param clientKey the key as the caller sent it, for messages
	 * @param key the scoped store key
	 * @param fingerprint fingerprint of the payload
	 * @param invocation the method
	 */
	public Object execute(IdempotencyPolicy policy, String clientKey, RecordKey key, Fingerprint fingerprint,
			Invocation invocation) throws Throwable {
		return execute(policy, clientKey, key, fingerprint, invocation, this.observer, null);
	}

	/**
	 * {@link #execute} whose outcome, when {@code recorder} is given, is stored as the
	 * recorder records it (an HTTP response as written) and replayed by the recorder.
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
	 * Runs an asynchronous {@code invocation} (one that returns a future) at most once
	 * per key. The claim is made on the calling thread, like {@link #execute}'s, so that
	 * the method runs there with its thread-bound context (request, security); the key is
	 * completed or released when the returned stage completes, and the lease renewed
	 * until then. A replay is an already-completed future. A duplicate in progress waits
	 * up to {@code waitFor} without holding a thread: its re-claims are scheduled, and if
	 * one of them wins, the method runs on the blocking-store threads (see
	 * {@link #setBlockingStoreExecutor}), never on the store client's thread that
	 * delivered the reply; the returned future completes there too. Refusals (in
	 * progress, key reused, store unavailable) complete the returned future
	 * exceptionally.
	 * <p>
	 * Cancelling the returned future detaches the caller: a method that has started runs
	 * to completion and its outcome is stored, so that the caller's retry gets it (a
	 * retry that runs again could repeat a side effect the cancelled call already had). A
	 * caller that cancels while waiting for a duplicate stops waiting.
	 */
	public CompletableFuture<@Nullable Object> executeAsync(IdempotencyPolicy policy, String clientKey, RecordKey key,
			Fingerprint fingerprint, AsyncInvocation invocation) {
		return executeAsync(policy, clientKey, key, fingerprint, invocation, IdempotencyObserver.NONE, null);
	}

	/**
	 * {@link #executeAsync} whose outcome, when {@code recorder} is given, is stored as
	 * the recorder records it and replayed by the recorder (see {@link #execute}).
	 */
	public CompletableFuture<@Nullable Object> executeAsync(IdempotencyPolicy policy, String clientKey, RecordKey key,
			Fingerprint fingerprint, AsyncInvocation invocation, IdempotencyObserver callObserver,
			@Nullable OutcomeRecorder recorder) {
		return asyncCall(policy, clientKey, key, fingerprint, invocation, callObserver, recorder,
				this.threads.blockingStoreExecutor())
			.start();
	}

	/**
	 * {@link #executeAsync} without blocking the calling thread at all, for reactive
	 * callers (an event loop): the first claim is asynchronous too, and the method runs
	 * on the blocking-store threads once it is answered, never on the store client's
	 * thread that delivered the reply.
	 */
	public CompletableFuture<@Nullable Object> executeNonBlocking(IdempotencyPolicy policy, String clientKey,
			RecordKey key, Fingerprint fingerprint, AsyncInvocation invocation) {
		return executeNonBlocking(policy, clientKey, key, fingerprint, invocation, IdempotencyObserver.NONE, null);
	}

	/**
	 * {@link #executeNonBlocking} whose outcome, when {@code recorder} is given, is
	 * stored as the recorder records it and replayed by the recorder (see
	 * {@link #execute}).
	 */
	public CompletableFuture<@Nullable Object> executeNonBlocking(IdempotencyPolicy policy, String clientKey,
			RecordKey key, Fingerprint fingerprint, AsyncInvocation invocation, IdempotencyObserver callObserver,
			@Nullable OutcomeRecorder recorder) {
		return executeNonBlocking(policy, clientKey, key, fingerprint, invocation, callObserver, recorder,
				this.threads.blockingStoreExecutor());
	}

	/**
	 * {@link #executeNonBlocking} that continues on {@code subscriberThread} after each
	 * of the store's replies: the method runs there, and the returned future completes
	 * there.
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
	 * Sets the executor that runs the blocking store primitives for asynchronous calls on
	 * a store without {@link AsyncIdempotencyStore} support: never the thread that
	 * completes a caller's future, which may be an event loop.
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
