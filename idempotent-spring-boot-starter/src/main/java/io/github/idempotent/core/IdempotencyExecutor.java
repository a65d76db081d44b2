package io.github.idempotent.core;

import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;

import io.github.idempotent.store.AsyncIdempotencyStore;
import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.StoredResult;
import io.github.idempotent.store.IdempotencyStore;

/**
 * The idempotency protocol, written once for every store: claim the key atomically, run
 * the method once while a watchdog renews the lease, store its outcome, replay it to
 * every later call with the same key.
 * <p>
 * The winner of a claim holds an {@link OwnerHandle} that completes or releases the key;
 * what is stored is written by {@link StoredOutcome}.
 */
public class IdempotencyExecutor implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(IdempotencyExecutor.class);

	private static final long FIRST_POLL_MILLIS = 10;

	private static final long MAX_POLL_MILLIS = 200;

	private final StoreOutageLog outageLog = new StoreOutageLog(logger, Duration.ofSeconds(10));

	/**
	 * Most lease renewals running at once. A renewal normally takes one round trip, so
	 * one thread keeps up with thousands of calls; the others are for renewals stuck
	 * until the client's timeout, each of which holds a thread meanwhile (at most
	 * {@link LeaseWatchdog#MAX_ATTEMPTS} per call).
	 */
	private static final int RENEWAL_THREADS = 16;

	private final IdempotencyStore store;

	private final FailureMode failureMode;

	private final long maxResultSize;

	private final ScheduledExecutorService watchdog;

	private final ThreadPoolExecutor renewals;

	private final LeaseWatchdog leases;

	private final IdempotencyObserver observer;

	private final boolean ownsWatchdog;

	private volatile @Nullable Executor blockingStoreExecutor;

	private volatile ResultCompression resultCompression = ResultCompression.none();

	private @Nullable ExecutorService ownedBlockingStoreExecutor;

	/**
	 * Creates an executor with its own lease watchdog thread and renewal threads, stopped
	 * by {@link #close()}.
	 */
	public IdempotencyExecutor(IdempotencyStore store, FailureMode failureMode, long maxResultSize,
			IdempotencyObserver observer) {
		this(store, failureMode, maxResultSize, newWatchdog(), observer, true);
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
			ScheduledExecutorService watchdog, IdempotencyObserver observer, boolean ownsWatchdog) {
		Assert.notNull(store, "store must not be null");
		Assert.notNull(failureMode, "failureMode must not be null");
		Assert.isTrue(maxResultSize > 0, "maxResultSize must be positive");
		Assert.notNull(watchdog, "watchdog must not be null");
		Assert.notNull(observer, "observer must not be null");
		this.store = store;
		this.failureMode = failureMode;
		this.maxResultSize = maxResultSize;
		this.watchdog = watchdog;
		this.renewals = newRenewals();
		this.leases = new LeaseWatchdog(store, watchdog, this.renewals, new LeaseWatchdog.LeaseListener() {

			@Override
			public void leaseLost(IdempotencyPolicy policy, String clientKey, String step, boolean whileHeld,
					IdempotencyObserver observer) {
				IdempotencyExecutor.this.leaseLost(policy, clientKey, step, whileHeld, observer);
			}

			@Override
			public void maxDurationExceeded(IdempotencyPolicy policy, String clientKey, IdempotencyObserver observer) {
				IdempotencyExecutor.this.maxDurationExceeded(policy, clientKey, observer);
			}

		});
		this.observer = IdempotencyObserver.failSafe(observer);
		this.ownsWatchdog = ownsWatchdog;
	}

	private static ScheduledExecutorService newWatchdog() {
		ScheduledThreadPoolExecutor watchdog = new ScheduledThreadPoolExecutor(1, (task) -> {
			Thread thread = new Thread(task, "idempotent-lease-watchdog");
			thread.setDaemon(true);
			return thread;
		});
		return watchdog;
	}

	/**
	 * Renewal threads started on demand and stopped after a while idle; a renewal that
	 * finds all of them busy is rejected and retried by the watchdog shortly after.
	 */
	private static ThreadPoolExecutor newRenewals() {
		AtomicInteger threads = new AtomicInteger();
		ThreadPoolExecutor renewals = new ThreadPoolExecutor(0, RENEWAL_THREADS, 30, TimeUnit.SECONDS,
				new SynchronousQueue<>(), (task) -> {
					Thread thread = new Thread(task, "idempotent-lease-renewal-" + threads.incrementAndGet());
					thread.setDaemon(true);
					return thread;
				});
		return renewals;
	}

	/**
	 * Stops the renewal threads, and the lease watchdog if this executor created it.
	 */
	@Override
	public void close() {
		this.renewals.shutdownNow();
		if (this.ownsWatchdog) {
			this.watchdog.shutdownNow();
		}
		synchronized (this) {
			if (this.ownedBlockingStoreExecutor != null) {
				this.ownedBlockingStoreExecutor.shutdown();
			}
		}
	}

	public IdempotencyStore getStore() {
		return this.store;
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
		return execute(policy, clientKey, key, fingerprint, invocation, this.observer);
	}

	/**
	 * {@link #execute} that also tells {@code callObserver} about this call: an observer
	 * of this one call (its trace), in addition to the executor's observers.
	 */
	public Object execute(IdempotencyPolicy policy, String clientKey, RecordKey key, Fingerprint fingerprint,
			Invocation invocation, IdempotencyObserver callObserver) throws Throwable {
		return execute(policy, clientKey, key, fingerprint, invocation, callObserver, null);
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
		ClaimResult claim;
		try {
			claim = this.store.claim(key, fingerprint, policy.lease());
		}
		catch (RuntimeException ex) {
			if (!isUnavailable(ex)) {
				throw ex;
			}
			return storeUnavailable(policy, clientKey, ex, invocation, observer);
		}
		long deadline = 0;
		long pollMillis = FIRST_POLL_MILLIS;
		while (true) {
			observer.step(policy, clientKey, IdempotencyObserver.Step.CLAIMED);
			if (claim instanceof ClaimResult.Acquired acquired) {
				return runAsOwner(policy, clientKey, key, acquired, fingerprint, invocation, observer, recorder);
			}
			if (claim instanceof ClaimResult.Completed completed) {
				return answerDuplicate(policy, clientKey, key, fingerprint, completed, recorder, observer, invocation);
			}
			if (claim instanceof ClaimResult.Damaged damaged) {
				throw damaged(policy, clientKey, key, damaged.damage());
			}
			ClaimResult.InProgress inProgress = (ClaimResult.InProgress) claim;
			checkFingerprint(policy, clientKey, fingerprint, inProgress.fingerprint(), observer);
			long now = System.nanoTime();
			if (deadline == 0) {
				deadline = now + policy.waitFor().toNanos();
			}
			long remainingMillis = TimeUnit.NANOSECONDS.toMillis(deadline - now);
			if (remainingMillis <= 0 || !sleep(Math.min(pollMillis, remainingMillis))) {
				throw reject(policy, new IdempotencyInProgressException(clientKey, policy.name(), policy.retryAfter()),
						observer);
			}
			pollMillis = Math.min(pollMillis * 2, MAX_POLL_MILLIS);
			try {
				// Claim, not just read: if the first call failed and released the key,
				// this caller becomes the owner and runs the method itself.
				claim = this.store.claim(key, fingerprint, policy.lease());
			}
			catch (RuntimeException ex) {
				if (!isUnavailable(ex)) {
					throw ex;
				}
				logUnavailable(policy, clientKey, ex);
				throw new IdempotencyStoreUnavailableException(policy.name(), policy.retryAfter(), ex);
			}
		}
	}

	/**
	 * Runs an asynchronous {@code invocation} (one that returns a future) at most once
	 * per key. The claim is made on the calling thread, like {@link #execute}'s, so that
	 * the method runs there with its thread-bound context (request, security); the key is
	 * completed or released when the returned stage completes, and the lease renewed
	 * until then. A replay is an already-completed future. A duplicate in progress waits
	 * up to {@code waitFor} without holding a thread: its re-claims are scheduled, and if
	 * one of them wins, the method runs on the thread that completed that claim. Refusals
	 * (in progress, key reused, store unavailable) complete the returned future
	 * exceptionally.
	 * <p>
	 * Cancelling the returned future detaches the caller: a method that has started runs
	 * to completion and its outcome is stored, so that the caller's retry gets it (a
	 * retry that runs again could repeat a side effect the cancelled call already had). A
	 * caller that cancels while waiting for a duplicate stops waiting.
	 */
	public CompletableFuture<@Nullable Object> executeAsync(IdempotencyPolicy policy, String clientKey, RecordKey key,
			Fingerprint fingerprint, AsyncInvocation invocation) {
		return executeAsync(policy, clientKey, key, fingerprint, invocation, IdempotencyObserver.NONE);
	}

	/**
	 * {@link #executeAsync} that also tells {@code callObserver} about this call: an
	 * observer of this one call (its trace), in addition to the executor's observers.
	 */
	public CompletableFuture<@Nullable Object> executeAsync(IdempotencyPolicy policy, String clientKey, RecordKey key,
			Fingerprint fingerprint, AsyncInvocation invocation, IdempotencyObserver callObserver) {
		return executeAsync(policy, clientKey, key, fingerprint, invocation, callObserver, null);
	}

	/**
	 * {@link #executeAsync} whose outcome, when {@code recorder} is given, is stored as
	 * the recorder records it and replayed by the recorder (see {@link #execute}).
	 */
	public CompletableFuture<@Nullable Object> executeAsync(IdempotencyPolicy policy, String clientKey, RecordKey key,
			Fingerprint fingerprint, AsyncInvocation invocation, IdempotencyObserver callObserver,
			@Nullable OutcomeRecorder recorder) {
		Assert.notNull(callObserver, "callObserver must not be null");
		AsyncCall call = new AsyncCall(policy, clientKey, key, fingerprint, invocation, forAsyncCall(callObserver),
				recorder);
		ClaimResult claim;
		try {
			claim = this.store.claim(key, fingerprint, policy.lease());
		}
		catch (RuntimeException ex) {
			call.firstClaimFailed(ex);
			return call.result;
		}
		call.handle(claim);
		return call.result;
	}

	/**
	 * {@link #executeAsync} without blocking the calling thread at all, for reactive
	 * callers (an event loop): the first claim is asynchronous too, and the method runs
	 * on the thread that completes it.
	 */
	public CompletableFuture<@Nullable Object> executeNonBlocking(IdempotencyPolicy policy, String clientKey,
			RecordKey key, Fingerprint fingerprint, AsyncInvocation invocation) {
		return executeNonBlocking(policy, clientKey, key, fingerprint, invocation, IdempotencyObserver.NONE);
	}

	/**
	 * {@link #executeNonBlocking} that also tells {@code callObserver} about this call's
	 * outcome: the caller's own context (a WebFlux response), which no thread carries.
	 */
	public CompletableFuture<@Nullable Object> executeNonBlocking(IdempotencyPolicy policy, String clientKey,
			RecordKey key, Fingerprint fingerprint, AsyncInvocation invocation, IdempotencyObserver callObserver) {
		return executeNonBlocking(policy, clientKey, key, fingerprint, invocation, callObserver, null);
	}

	/**
	 * {@link #executeNonBlocking} whose outcome, when {@code recorder} is given, is
	 * stored as the recorder records it and replayed by the recorder (see
	 * {@link #execute}).
	 */
	public CompletableFuture<@Nullable Object> executeNonBlocking(IdempotencyPolicy policy, String clientKey,
			RecordKey key, Fingerprint fingerprint, AsyncInvocation invocation, IdempotencyObserver callObserver,
			@Nullable OutcomeRecorder recorder) {
		Assert.notNull(callObserver, "callObserver must not be null");
		AsyncCall call = new AsyncCall(policy, clientKey, key, fingerprint, invocation, forAsyncCall(callObserver),
				recorder);
		claimAsync(key, fingerprint, policy.lease()).whenComplete((claim, failure) -> {
			if (failure != null) {
				call.firstClaimFailed(unwrap(failure));
			}
			else {
				call.handle(claim);
			}
		});
		return call.result;
	}

	private IdempotencyObserver forAsyncCall(IdempotencyObserver callObserver) {
		return (callObserver == IdempotencyObserver.NONE) ? this.observer.forAsyncCall() : IdempotencyObserver
			.composite(List.of(this.observer.forAsyncCall(), IdempotencyObserver.failSafe(callObserver)));
	}

	/**
	 * Sets the executor that runs the blocking store primitives for asynchronous calls on
	 * a store without {@link AsyncIdempotencyStore} support: never the thread that
	 * completes a caller's future, which may be an event loop.
	 */
	public void setBlockingStoreExecutor(Executor blockingStoreExecutor) {
		Assert.notNull(blockingStoreExecutor, "blockingStoreExecutor must not be null");
		this.blockingStoreExecutor = blockingStoreExecutor;
	}

	/**
	 * Sets how results are compressed before they are stored; none unless set. Compressed
	 * records are replayed whatever this setting.
	 */
	public void setResultCompression(ResultCompression resultCompression) {
		Assert.notNull(resultCompression, "resultCompression must not be null");
		this.resultCompression = resultCompression;
	}

	private @Nullable AsyncIdempotencyStore asyncStore() {
		return (this.store instanceof AsyncIdempotencyStore async && async.supportsAsync()) ? async : null;
	}

	CompletableFuture<ClaimResult> claimAsync(RecordKey key, Fingerprint fingerprint, Duration lease) {
		AsyncIdempotencyStore async = asyncStore();
		if (async != null) {
			return call(() -> async.claimAsync(key, fingerprint, lease));
		}
		return CompletableFuture.supplyAsync(() -> this.store.claim(key, fingerprint, lease), blockingStoreExecutor());
	}

	CompletableFuture<Boolean> completeAsync(RecordKey key, String token, Fingerprint fingerprint, StoredResult result,
			Duration ttl) {
		AsyncIdempotencyStore async = asyncStore();
		if (async != null) {
			return call(() -> async.completeAsync(key, token, fingerprint, result, ttl));
		}
		return CompletableFuture.supplyAsync(() -> this.store.complete(key, token, fingerprint, result, ttl),
				blockingStoreExecutor());
	}

	CompletableFuture<Boolean> releaseAsync(RecordKey key, String token) {
		AsyncIdempotencyStore async = asyncStore();
		if (async != null) {
			return call(() -> async.releaseAsync(key, token));
		}
		return CompletableFuture.supplyAsync(() -> this.store.release(key, token), blockingStoreExecutor());
	}

	private static <T> CompletableFuture<T> call(Supplier<CompletionStage<T>> operation) {
		try {
			return operation.get().toCompletableFuture();
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	Executor blockingStoreExecutor() {
		Executor executor = this.blockingStoreExecutor;
		if (executor == null) {
			synchronized (this) {
				executor = this.blockingStoreExecutor;
				if (executor == null) {
					executor = newBlockingStoreExecutor();
					this.ownedBlockingStoreExecutor = (ExecutorService) executor;
					this.blockingStoreExecutor = executor;
				}
			}
		}
		return executor;
	}

	private static ExecutorService newBlockingStoreExecutor() {
		// Used only when no executor was set (no Reactor): bounded, like Reactor's
		// bounded elastic scheduler, with idle threads let go.
		ThreadPoolExecutor executor = new ThreadPoolExecutor(64, 64, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
				(task) -> {
					Thread thread = new Thread(task, "idempotent-store");
					thread.setDaemon(true);
					return thread;
				});
		executor.allowCoreThreadTimeOut(true);
		return executor;
	}

	static Throwable unwrap(Throwable failure) {
		Throwable ex = failure;
		while ((ex instanceof CompletionException || ex instanceof ExecutionException) && ex.getCause() != null) {
			ex = ex.getCause();
		}
		return ex;
	}

	/**
	 * One asynchronous call: its claims, its wait for a duplicate, and its outcome.
	 */
	private final class AsyncCall {

		private final IdempotencyPolicy policy;

		private final String clientKey;

		private final RecordKey key;

		private final Fingerprint fingerprint;

		private final AsyncInvocation invocation;

		private final IdempotencyObserver observer;

		private final @Nullable OutcomeRecorder recorder;

		final CompletableFuture<@Nullable Object> result = new CompletableFuture<>();

		private long deadline;

		private long pollMillis = FIRST_POLL_MILLIS;

		AsyncCall(IdempotencyPolicy policy, String clientKey, RecordKey key, Fingerprint fingerprint,
				AsyncInvocation invocation, IdempotencyObserver observer, @Nullable OutcomeRecorder recorder) {
			this.policy = policy;
			this.clientKey = clientKey;
			this.key = key;
			this.fingerprint = fingerprint;
			this.invocation = invocation;
			this.observer = observer;
			this.recorder = recorder;
		}

		void firstClaimFailed(Throwable ex) {
			if (!isUnavailable(ex)) {
				this.result.completeExceptionally(ex);
				return;
			}
			RuntimeException failure = (ex instanceof RuntimeException runtime) ? runtime
					: new IllegalStateException(ex);
			if (IdempotencyExecutor.this.failureMode == FailureMode.CLOSED) {
				logUnavailable(this.policy, this.clientKey, failure);
				this.result.completeExceptionally(
						new IdempotencyStoreUnavailableException(this.policy.name(), this.policy.retryAfter(), ex));
				return;
			}
			logger.warn("Idempotency store unavailable, running " + this.policy.name() + " for key '" + this.clientKey
					+ "' unprotected (idempotent.failure-mode=open): " + ex);
			this.observer.bypassed(this.policy, this.clientKey, failure);
			try {
				try (IdempotencyContext.Scope scope = IdempotencyContext.unbind()) {
					pipe(this.invocation.proceed());
				}
			}
			catch (Throwable methodFailure) {
				this.result.completeExceptionally(methodFailure);
			}
		}

		private void pipe(@Nullable CompletionStage<?> stage) {
			if (stage == null) {
				this.result.completeExceptionally(nullStage());
				return;
			}
			stage.whenComplete((value, ex) -> {
				if (ex != null) {
					this.result.completeExceptionally(unwrap(ex));
				}
				else {
					this.result.complete(value);
				}
			});
		}

		private IllegalStateException nullStage() {
			return new IllegalStateException(this.policy.name()
					+ " returned null instead of a future or Mono; return a completed one for a null result");
		}

		void handle(ClaimResult claim) {
			try {
				this.observer.step(this.policy, this.clientKey, IdempotencyObserver.Step.CLAIMED);
				if (claim instanceof ClaimResult.Acquired acquired) {
					run(acquired);
					return;
				}
				if (claim instanceof ClaimResult.Completed completed) {
					Object answer = answerDuplicate(this.policy, this.clientKey, this.key, this.fingerprint, completed,
							this.recorder, this.observer, this.invocation::proceed);
					if (this.policy.duplicates() == DuplicateHandling.FLAG) {
						// The flagged run's own future: its outcome is the caller's.
						pipe((CompletionStage<?>) answer);
					}
					else {
						this.result.complete(answer);
					}
					return;
				}
				if (claim instanceof ClaimResult.Damaged damaged) {
					throw damaged(this.policy, this.clientKey, this.key, damaged.damage());
				}
				ClaimResult.InProgress inProgress = (ClaimResult.InProgress) claim;
				checkFingerprint(this.policy, this.clientKey, this.fingerprint, inProgress.fingerprint(),
						this.observer);
				long now = System.nanoTime();
				if (this.deadline == 0) {
					this.deadline = now + this.policy.waitFor().toNanos();
				}
				long remainingMillis = TimeUnit.NANOSECONDS.toMillis(this.deadline - now);
				if (remainingMillis <= 0) {
					throw reject(this.policy, new IdempotencyInProgressException(this.clientKey, this.policy.name(),
							this.policy.retryAfter()), this.observer);
				}
				long delay = Math.min(this.pollMillis, remainingMillis);
				this.pollMillis = Math.min(this.pollMillis * 2, MAX_POLL_MILLIS);
				// Scheduled on the watchdog's timer, which only starts the next claim: no
				// thread waits for the first call.
				IdempotencyExecutor.this.watchdog.schedule(this::reclaim, delay, TimeUnit.MILLISECONDS);
			}
			catch (Throwable ex) {
				this.result.completeExceptionally(ex);
			}
		}

		private void reclaim() {
			if (this.result.isDone()) {
				return;
			}
			claimAsync(this.key, this.fingerprint, this.policy.lease()).whenComplete((claim, failure) -> {
				if (failure == null) {
					handle(claim);
					return;
				}
				Throwable ex = unwrap(failure);
				if (isUnavailable(ex)) {
					logUnavailable(this.policy, this.clientKey,
							(ex instanceof RuntimeException runtime) ? runtime : new IllegalStateException(ex));
					ex = new IdempotencyStoreUnavailableException(this.policy.name(), this.policy.retryAfter(), ex);
				}
				this.result.completeExceptionally(ex);
			});
		}

		private void run(ClaimResult.Acquired acquired) {
			OwnerHandle owner = own(this.policy, this.clientKey, this.key, acquired.token(), this.fingerprint,
					this.observer);
			if (this.result.isDone()) {
				// The caller went away before the method started: nothing ran, so a
				// retry may run it.
				owner.abandonAsync(new CancellationException());
				return;
			}
			takenOver(this.policy, this.clientKey, acquired);
			CompletionStage<?> stage;
			try (IdempotencyContext.Scope scope = IdempotencyContext
				.bind(context(this.policy, this.clientKey, acquired))) {
				stage = this.invocation.proceed();
				if (stage == null) {
					throw nullStage();
				}
			}
			catch (Throwable ex) {
				owner.releaseAsync(ex).whenComplete((done, never) -> this.result.completeExceptionally(ex));
				return;
			}
			// The caller's future completes after the store has answered, so that a
			// client that retries as soon as it has the answer gets a replay, not a 409.
			stage.whenComplete((value, failure) -> {
				if (failure == null && this.recorder != null && this.recorder.records()) {
					// Completed once the response is written; until then the lease is
					// renewed, and a retry waits or gets 409.
					recordLater(this.recorder, owner, value);
					this.result.complete(value);
				}
				else if (failure == null) {
					owner.completeAsync(value).whenComplete((done, never) -> this.result.complete(value));
				}
				else {
					Throwable cause = unwrap(failure);
					owner.releaseAsync(cause).whenComplete((done, never) -> this.result.completeExceptionally(cause));
				}
			});
		}

	}

	/**
	 * Whether a store failure means the store cannot be reached (a connection refused,
	 * reset or timed out, a pool exhausted, a server that is loading, read-only or out of
	 * memory), as opposed to a failure of the data or of the code. Only the former is
	 * "store unavailable": it answers 503, or runs the method unprotected under
	 * {@code failure-mode=open}, which a malformed request must never be able to cause.
	 * Checked by class name so that the core needs neither Spring's DAO classes nor a
	 * store client.
	 */
	static boolean isUnavailable(Throwable failure) {
		for (Throwable ex = failure; ex != null; ex = ex.getCause()) {
			if (ex instanceof java.io.IOException || ex instanceof java.util.concurrent.TimeoutException
					|| ex instanceof IdempotencyStoreUnavailableException) {
				return true;
			}
			for (Class<?> type = ex.getClass(); type != null; type = type.getSuperclass()) {
				if (UNAVAILABLE_TYPES.contains(type.getName())
						|| (type.getName().equals(REDIS_ERROR_REPLY) && isPassingRefusal(ex.getMessage()))) {
					return true;
				}
			}
			if (ex.getCause() == ex) {
				break;
			}
		}
		return false;
	}

	private static final String REDIS_ERROR_REPLY = "io.lettuce.core.RedisCommandExecutionException";

	/**
	 * Error replies of a Redis server that refuses writes for a while, not for what was
	 * sent: its memory is full under {@code noeviction} ({@code OOM}), it is a replica or
	 * lost its primary during a failover ({@code READONLY}, {@code MASTERDOWN},
	 * {@code NOREPLICAS}), or a Cluster slot is moving ({@code TRYAGAIN},
	 * {@code CLUSTERDOWN}). Inside a script, Redis 6 wraps them as {@code -OOM ...}.
	 */
	private static final java.util.List<String> PASSING_REFUSALS = java.util.List.of("OOM ", "READONLY ", "MASTERDOWN ",
			"NOREPLICAS ", "TRYAGAIN ", "CLUSTERDOWN ");

	private static boolean isPassingRefusal(@Nullable String message) {
		if (message == null) {
			return false;
		}
		for (String refusal : PASSING_REFUSALS) {
			if (message.startsWith(refusal) || message.contains("-" + refusal)) {
				return true;
			}
		}
		return false;
	}

	private static final java.util.Set<String> UNAVAILABLE_TYPES = java.util.Set.of(
			"org.springframework.dao.TransientDataAccessException",
			"org.springframework.dao.DataAccessResourceFailureException",
			"org.springframework.dao.RecoverableDataAccessException",
			"org.springframework.transaction.CannotCreateTransactionException", "java.sql.SQLTransientException",
			"java.sql.SQLRecoverableException", "io.lettuce.core.RedisConnectionException",
			"io.lettuce.core.RedisCommandTimeoutException", "io.lettuce.core.RedisLoadingException",
			"io.lettuce.core.RedisBusyException", "io.github.idempotent.store.memory.InMemoryStoreFullException");

	private void logUnavailable(IdempotencyPolicy policy, String clientKey, RuntimeException ex) {
		this.outageLog.refused(policy, clientKey, ex);
	}

	private @Nullable Object runAsOwner(IdempotencyPolicy policy, String clientKey, RecordKey key,
			ClaimResult.Acquired acquired, Fingerprint fingerprint, Invocation invocation, IdempotencyObserver observer,
			@Nullable OutcomeRecorder recorder) throws Throwable {
		OwnerHandle owner = own(policy, clientKey, key, acquired.token(), fingerprint, observer);
		takenOver(policy, clientKey, acquired);
		Object result;
		try (IdempotencyContext.Scope scope = IdempotencyContext.bind(context(policy, clientKey, acquired))) {
			result = invocation.proceed();
		}
		catch (Throwable ex) {
			owner.release(ex);
			throw ex;
		}
		if (recorder != null && recorder.records()) {
			recordLater(recorder, owner, result);
		}
		else {
			owner.complete(result);
		}
		return result;
	}

	private static IdempotencyContext context(IdempotencyPolicy policy, String clientKey,
			ClaimResult.Acquired acquired) {
		return IdempotencyContext.owner(policy.name(), clientKey, acquired.attempt(),
				acquired.previousAttemptStartedAt());
	}

	/**
	 * Says that a call is about to run again for a key whose previous call never
	 * finished: the one place where an operator sees that a side effect may be repeated
	 * unless the method checks ({@link IdempotencyContext#isTakeover()}).
	 */
	private static void takenOver(IdempotencyPolicy policy, String clientKey, ClaimResult.Acquired acquired) {
		if (acquired.isTakeover()) {
			logger.warn("Key '" + clientKey + "' of " + policy.name() + " is taken over by attempt "
					+ acquired.attempt() + ": the previous call"
					+ ((acquired.previousAttemptStartedAt() != null)
							? " (started " + acquired.previousAttemptStartedAt() + ")" : "")
					+ " never finished (its instance stopped, hung past its lease, or an operator forced the key "
					+ "free), so its side effects may have happened; the method runs again and can tell from "
					+ "IdempotencyContext");
		}
	}

	/**
	 * Hands a returned call to its recorder; a recorder that fails to take it leaves the
	 * value stored through the codec, so that the hold ends either way.
	 */
	private static void recordLater(OutcomeRecorder recorder, OwnerHandle owner, @Nullable Object value) {
		owner.returned();
		try {
			recorder.recordLater(owner, value);
		}
		catch (RuntimeException ex) {
			logger.warn("Could not record the response of " + owner.policy().name() + " for key '" + owner.clientKey()
					+ "'; its return value is stored instead", ex);
			owner.complete(value);
		}
	}

	/**
	 * Takes ownership of a key this caller has just acquired: registers its lease for
	 * renewal and returns the handle that ends it.
	 */
	OwnerHandle own(IdempotencyPolicy policy, String clientKey, RecordKey key, String token, Fingerprint fingerprint,
			IdempotencyObserver observer) {
		return new OwnerHandle(this, policy, clientKey, key,
				this.leases.watch(policy, clientKey, key, token, fingerprint, observer), observer);
	}

	void unwatch(LeaseWatchdog.Lease lease) {
		this.leases.unwatch(lease);
	}

	void rewatch(LeaseWatchdog.Lease lease) {
		this.leases.rewatch(lease);
	}

	long maxResultSize() {
		return this.maxResultSize;
	}

	ResultCompression resultCompression() {
		return this.resultCompression;
	}

	private Object storeUnavailable(IdempotencyPolicy policy, String clientKey, RuntimeException ex,
			Invocation invocation, IdempotencyObserver observer) throws Throwable {
		if (this.failureMode == FailureMode.CLOSED) {
			logUnavailable(policy, clientKey, ex);
			throw new IdempotencyStoreUnavailableException(policy.name(), policy.retryAfter(), ex);
		}
		logger.warn("Idempotency store unavailable, running " + policy.name() + " for key '" + clientKey
				+ "' unprotected (idempotent.failure-mode=open): " + ex);
		observer.bypassed(policy, clientKey, ex);
		// No context: an enclosing call's must not tell this unprotected one that it is
		// a first attempt.
		try (IdempotencyContext.Scope scope = IdempotencyContext.unbind()) {
			return invocation.proceed();
		}
	}

	/**
	 * The answer to a duplicate of a completed call, as its operation handles duplicates:
	 * the stored outcome ({@code REPLAY}), {@code null} without reading it ({@code SKIP},
	 * so that a result that no longer decodes does not matter), or what
	 * {@code invocation} returns when run with a duplicate's context bound
	 * ({@code FLAG}). A flagged run stores and releases nothing, so the record stays as
	 * the first call left it, and its exception goes to the caller. Another payload under
	 * the key is refused in every mode.
	 */
	private @Nullable Object answerDuplicate(IdempotencyPolicy policy, String clientKey, RecordKey key,
			Fingerprint fingerprint, ClaimResult.Completed completed, @Nullable OutcomeRecorder recorder,
			IdempotencyObserver observer, Invocation invocation) throws Throwable {
		checkFingerprint(policy, clientKey, fingerprint, completed.fingerprint(), observer);
		switch (policy.duplicates()) {
			case SKIP -> {
				observer.skipped(policy, clientKey);
				return null;
			}
			case FLAG -> {
				observer.flagged(policy, clientKey);
				try (IdempotencyContext.Scope scope = IdempotencyContext
					.bind(IdempotencyContext.duplicate(policy.name(), clientKey))) {
					return invocation.proceed();
				}
			}
			default -> {
				// Told before the stored response is written: an observer marks it as
				// replayed (a response header), which it can no longer do after.
				observer.replayed(policy, clientKey);
				return replay(policy, clientKey, key, completed.result(), recorder);
			}
		}
	}

	private @Nullable Object replay(IdempotencyPolicy policy, String clientKey, RecordKey key, StoredResult result,
			@Nullable OutcomeRecorder recorder) throws Throwable {
		try {
			RecordedResponse recorded = StoredOutcome.recordedResponse(result, this.maxResultSize);
			if (recorded == null) {
				Object value = StoredOutcome.replay(policy, clientKey, result, this.maxResultSize);
				return (recorder != null) ? recorder.replayValue(policy, clientKey, value) : value;
			}
			if (recorder == null) {
				throw new IdempotencyResultException("The result of " + policy.name() + " for key '" + clientKey
						+ "' was stored as the HTTP response its first caller was sent; it is replayed only to an "
						+ "HTTP request handled by the same method, not to this call");
			}
			return recorder.replay(policy, clientKey, recorded);
		}
		catch (StoredOutcome.DamagedOutcomeException ex) {
			throw damaged(policy, clientKey, key, ex.getMessage());
		}
	}

	/**
	 * The refusal of a call whose record cannot be read, logged once here, where the
	 * record key is known: a warning without a stack trace, since the damage is named and
	 * the trace would only show this method.
	 */
	private static IdempotencyRecordDamagedException damaged(IdempotencyPolicy policy, String clientKey, RecordKey key,
			String damage) {
		String message = "Idempotency record " + key.value() + " of " + policy.name() + " for key '" + clientKey
				+ "' cannot be read: " + damage + ". Answered that the result is unavailable; the method is not run "
				+ "again for this key. Delete the record (actuator endpoint idempotency) to let the key run";
		logger.warn(message);
		return new IdempotencyRecordDamagedException(message, damage);
	}

	private static void checkFingerprint(IdempotencyPolicy policy, String clientKey, Fingerprint expected,
			Fingerprint actual, IdempotencyObserver observer) {
		if (!expected.equals(actual)) {
			throw reject(policy, new IdempotencyKeyReusedException(clientKey, policy.name()), observer);
		}
	}

	private static IdempotencyException reject(IdempotencyPolicy policy, IdempotencyException ex,
			IdempotencyObserver observer) {
		String key = (ex instanceof IdempotencyInProgressException inProgress) ? inProgress.getKey()
				: ((IdempotencyKeyReusedException) ex).getKey();
		observer.rejected(policy, key, ex);
		return ex;
	}

	void leaseLost(IdempotencyPolicy policy, String clientKey, String step, boolean whileHeld,
			IdempotencyObserver observer) {
		if (whileHeld) {
			// Not a stall: the lease still held, so the record was deleted under it.
			logger.warn("Key '" + clientKey + "' of " + policy.name() + " was taken from the call running under it, "
					+ "found at its " + step + " while its lease still held: its record was deleted (an operator's "
					+ "DELETE with force=true). The call's renewals and its result are fenced out; a retry runs "
					+ "the method");
		}
		else {
			logger.warn("Lease of key '" + clientKey + "' of " + policy.name() + " was lost before " + step
					+ ": the method ran longer than the lease without renewal; a duplicate may have run. "
					+ "Increase the lease or check the store's latency");
		}
		observer.leaseLost(policy, clientKey);
	}

	void maxDurationExceeded(IdempotencyPolicy policy, String clientKey, IdempotencyObserver observer) {
		logger.warn("Key '" + clientKey + "' of " + policy.name() + " has been held by one call for its maxDuration ("
				+ policy.maxDuration() + "): its lease is no longer renewed, so a retry runs the method once the "
				+ "lease (" + policy.lease() + ") runs out, and the call's result, if it ever comes, goes to its "
				+ "caller but is not stored. Raise maxDuration (idempotent.max-duration) if the method is "
				+ "legitimately this slow");
		observer.maxDurationExceeded(policy, clientKey);
	}

	/**
	 * Whether an exception type can be recreated from a stored outcome, which
	 * {@code cacheFor} requires.
	 */
	public static boolean isRecreatable(Class<? extends Throwable> type) {
		return StoredOutcome.isRecreatable(type);
	}

	private static boolean sleep(long millis) {
		try {
			Thread.sleep(millis);
			return true;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
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
