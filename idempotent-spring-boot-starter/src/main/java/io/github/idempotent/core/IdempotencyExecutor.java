package io.github.idempotent.core;

import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;

import io.github.idempotent.store.ClaimResult;
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

	private static final long UNAVAILABLE_LOG_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(10);

	private final java.util.concurrent.atomic.AtomicLong lastUnavailableLog = new java.util.concurrent.atomic.AtomicLong(
			System.nanoTime() - UNAVAILABLE_LOG_INTERVAL_NANOS);

	private final IdempotencyStore store;

	private final FailureMode failureMode;

	private final long maxResultSize;

	private final ScheduledExecutorService watchdog;

	private final LeaseWatchdog leases;

	private final IdempotencyObserver observer;

	private final boolean ownsWatchdog;

	/**
	 * Creates an executor with its own lease watchdog thread, stopped by
	 * {@link #close()}.
	 */
	public IdempotencyExecutor(IdempotencyStore store, FailureMode failureMode, long maxResultSize,
			IdempotencyObserver observer) {
		this(store, failureMode, maxResultSize, newWatchdog(), observer, true);
	}

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
		this.leases = new LeaseWatchdog(store, watchdog, this::leaseLost);
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
	 * Stops the lease watchdog if this executor created it.
	 */
	@Override
	public void close() {
		if (this.ownsWatchdog) {
			this.watchdog.shutdownNow();
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
	public Object execute(IdempotencyPolicy policy, String clientKey, IdempotencyKey key, Fingerprint fingerprint,
			Invocation invocation) throws Throwable {
		ClaimResult claim;
		try {
			claim = this.store.claim(key, fingerprint, policy.lease());
		}
		catch (RuntimeException ex) {
			if (!isUnavailable(ex)) {
				throw ex;
			}
			return storeUnavailable(policy, clientKey, ex, invocation);
		}
		long deadline = 0;
		long pollMillis = FIRST_POLL_MILLIS;
		while (true) {
			if (claim instanceof ClaimResult.Acquired acquired) {
				return runAsOwner(policy, clientKey, key, acquired.token(), fingerprint, invocation);
			}
			if (claim instanceof ClaimResult.Completed completed) {
				checkFingerprint(policy, clientKey, fingerprint, completed.fingerprint());
				this.observer.replayed(policy, clientKey);
				return StoredOutcome.replay(policy, clientKey, completed.result());
			}
			ClaimResult.InProgress inProgress = (ClaimResult.InProgress) claim;
			checkFingerprint(policy, clientKey, fingerprint, inProgress.fingerprint());
			long now = System.nanoTime();
			if (deadline == 0) {
				deadline = now + policy.waitFor().toNanos();
			}
			long remainingMillis = TimeUnit.NANOSECONDS.toMillis(deadline - now);
			if (remainingMillis <= 0 || !sleep(Math.min(pollMillis, remainingMillis))) {
				throw reject(policy, new IdempotencyInProgressException(clientKey, policy.name(), policy.retryAfter()));
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
	 * Whether a store failure means the store cannot be reached (a connection refused,
	 * reset or timed out, a pool exhausted, a server that is loading or read-only), as
	 * opposed to a failure of the data or of the code. Only the former is "store
	 * unavailable": it answers 503, or runs the method unprotected under
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
				if (UNAVAILABLE_TYPES.contains(type.getName())) {
					return true;
				}
			}
			if (ex.getCause() == ex) {
				break;
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
		long now = System.nanoTime();
		long last = this.lastUnavailableLog.get();
		// One line per ten seconds at most: an outage refuses every call.
		if (now - last >= UNAVAILABLE_LOG_INTERVAL_NANOS && this.lastUnavailableLog.compareAndSet(last, now)) {
			logger.warn("Idempotency store unavailable: refusing " + policy.name() + " for key '" + clientKey
					+ "' (idempotent.failure-mode=closed answers 503); further refusals are logged at debug for "
					+ "10 s: " + ex);
		}
		else if (logger.isDebugEnabled()) {
			logger.debug("Idempotency store unavailable: refusing " + policy.name() + " for key '" + clientKey + "'",
					ex);
		}
	}

	private @Nullable Object runAsOwner(IdempotencyPolicy policy, String clientKey, IdempotencyKey key, String token,
			Fingerprint fingerprint, Invocation invocation) throws Throwable {
		OwnerHandle owner = own(policy, clientKey, key, token, fingerprint, this.observer);
		Object result;
		try {
			result = invocation.proceed();
		}
		catch (Throwable ex) {
			owner.release(ex);
			throw ex;
		}
		owner.complete(result);
		return result;
	}

	/**
	 * Takes ownership of a key this caller has just acquired: registers its lease for
	 * renewal and returns the handle that ends it.
	 */
	OwnerHandle own(IdempotencyPolicy policy, String clientKey, IdempotencyKey key, String token,
			Fingerprint fingerprint, IdempotencyObserver observer) {
		return new OwnerHandle(this, policy, clientKey, key,
				this.leases.watch(policy, clientKey, key, token, fingerprint), observer);
	}

	void unwatch(LeaseWatchdog.Lease lease) {
		this.leases.unwatch(lease);
	}

	long maxResultSize() {
		return this.maxResultSize;
	}

	private Object storeUnavailable(IdempotencyPolicy policy, String clientKey, RuntimeException ex,
			Invocation invocation) throws Throwable {
		if (this.failureMode == FailureMode.CLOSED) {
			logUnavailable(policy, clientKey, ex);
			throw new IdempotencyStoreUnavailableException(policy.name(), policy.retryAfter(), ex);
		}
		logger.warn("Idempotency store unavailable, running " + policy.name() + " for key '" + clientKey
				+ "' unprotected (idempotent.failure-mode=open): " + ex);
		this.observer.bypassed(policy, clientKey, ex);
		return invocation.proceed();
	}

	private void checkFingerprint(IdempotencyPolicy policy, String clientKey, Fingerprint expected,
			Fingerprint actual) {
		if (!expected.equals(actual)) {
			throw reject(policy, new IdempotencyKeyReusedException(clientKey, policy.name()));
		}
	}

	private IdempotencyException reject(IdempotencyPolicy policy, IdempotencyException ex) {
		String key = (ex instanceof IdempotencyInProgressException inProgress) ? inProgress.getKey()
				: ((IdempotencyKeyReusedException) ex).getKey();
		this.observer.rejected(policy, key, ex);
		return ex;
	}

	void leaseLost(IdempotencyPolicy policy, String clientKey, String step) {
		logger.warn("Lease of key '" + clientKey + "' of " + policy.name() + " was lost before " + step
				+ ": the method ran longer than the lease without renewal; a duplicate may have run. "
				+ "Increase the lease or check the store's latency");
		this.observer.leaseLost(policy, clientKey);
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
	 * The guarded method.
	 */
	@FunctionalInterface
	public interface Invocation {

		Object proceed() throws Throwable;

	}

}
