package io.github.idempotent.core;

import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.StoredResult;

/**
 * The idempotency protocol, written once for every store: claim the key atomically, run
 * the method once while a watchdog renews the lease, store its outcome, replay it to
 * every later call with the same key.
 * <p>
 * Stored bytes start with one marker byte: {@code V} for a return value (the codec's
 * bytes follow), {@code E} for an exception listed in {@code cacheFor} (its class name
 * and message follow), {@code X} for a result that could not be stored (the reason
 * follows).
 */
public class IdempotencyExecutor implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(IdempotencyExecutor.class);

	private static final byte VALUE = 'V';

	private static final byte ERROR = 'E';

	private static final byte UNSTORABLE = 'X';

	private static final long FIRST_POLL_MILLIS = 10;

	private static final long MAX_POLL_MILLIS = 200;

	private static final long UNAVAILABLE_LOG_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(10);

	private final java.util.concurrent.atomic.AtomicLong lastUnavailableLog = new java.util.concurrent.atomic.AtomicLong(
			System.nanoTime() - UNAVAILABLE_LOG_INTERVAL_NANOS);

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
		this.leases = new LeaseWatchdog(store, watchdog, this.renewals, this::leaseLost);
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
				return replay(policy, clientKey, completed.result());
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

	private Object runAsOwner(IdempotencyPolicy policy, String clientKey, IdempotencyKey key, String token,
			Fingerprint fingerprint, Invocation invocation) throws Throwable {
		LeaseWatchdog.Lease lease = this.leases.watch(policy, clientKey, key, token, fingerprint);
		Object result;
		try {
			result = invocation.proceed();
		}
		catch (Throwable ex) {
			this.leases.unwatch(lease);
			if (policy.isCached(ex) && isReplayable(policy, clientKey, ex)) {
				complete(policy, clientKey, key, lease, errorOutcome(ex));
			}
			else {
				release(policy, clientKey, key, lease, ex);
			}
			throw ex;
		}
		this.leases.unwatch(lease);
		this.observer.executed(policy, clientKey);
		complete(policy, clientKey, key, lease, valueOutcome(policy, clientKey, result));
		return result;
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

	private void complete(IdempotencyPolicy policy, String clientKey, IdempotencyKey key, LeaseWatchdog.Lease owner,
			StoredResult result) {
		try {
			if (!this.store.complete(key, owner.token(), owner.fingerprint(), result, policy.ttl())
					&& !owner.isLost()) {
				leaseLost(policy, clientKey, "complete");
			}
		}
		catch (RuntimeException ex) {
			// The method has run: its result goes back to this caller. The store may
			// have stored it all the same (only the answer was lost): then retries get
			// it replayed. If not, they see the placeholder until the lease expires, then
			// may run the method again.
			logger.error("Could not confirm that the result of " + policy.name() + " for key '" + clientKey
					+ "' was stored: if it was not, retries are refused as in progress until the lease expires "
					+ "and may then run the method again", ex);
		}
	}

	private void release(IdempotencyPolicy policy, String clientKey, IdempotencyKey key, LeaseWatchdog.Lease owner,
			Throwable failure) {
		try {
			if (!this.store.release(key, owner.token()) && !owner.isLost()) {
				leaseLost(policy, clientKey, "release");
			}
		}
		catch (RuntimeException ex) {
			failure.addSuppressed(ex);
			logger.error("Could not release key '" + clientKey + "' of " + policy.name()
					+ " after the method failed; retries are refused until its lease expires", ex);
		}
	}

	private void leaseLost(IdempotencyPolicy policy, String clientKey, String step) {
		logger.warn("Lease of key '" + clientKey + "' of " + policy.name() + " was lost before " + step
				+ ": the method ran longer than the lease without renewal; a duplicate may have run. "
				+ "Increase the lease or check the store's latency");
		this.observer.leaseLost(policy, clientKey);
	}

	private StoredResult valueOutcome(IdempotencyPolicy policy, String clientKey, Object value) {
		ResultBuffer out = new ResultBuffer(VALUE, this.maxResultSize);
		try {
			policy.codec().encode(value, out);
		}
		catch (RuntimeException ex) {
			logger.error("Result of " + policy.name() + " for key '" + clientKey
					+ "' cannot be encoded; retries with this key get an error instead of a replay", ex);
			return unstorable("The result of " + policy.name() + " could not be encoded (" + ex.getMessage()
					+ "); it ran once and will not run again for this key");
		}
		if (out.size() > this.maxResultSize) {
			logger.error("Result of " + policy.name() + " for key '" + clientKey + "' is " + out.size()
					+ " bytes, above idempotent.max-result-size=" + this.maxResultSize
					+ "; retries with this key get an error instead of a replay");
			return unstorable("The result of " + policy.name() + " was " + out.size()
					+ " bytes, above idempotent.max-result-size; it ran once and will not run again for this key");
		}
		return new StoredResult(out.bytes());
	}

	/**
	 * Whether a replay would throw the same exception: the same class with the same
	 * message, recreated as {@link #storedError} will recreate it. An exception that
	 * cannot be (a {@code ResponseStatusException} under {@code cacheFor =
	 * RuntimeException.class}, whose status would be lost) is not stored: its key is
	 * released, so a retry runs the method and gets the real outcome again.
	 */
	private static boolean isReplayable(IdempotencyPolicy policy, String clientKey, Throwable ex) {
		Throwable recreated;
		try {
			recreated = instantiate(ex.getClass(), (ex.getMessage() != null) ? ex.getMessage() : "");
		}
		catch (ReflectiveOperationException | RuntimeException | LinkageError failure) {
			recreated = null;
		}
		if (recreated != null && recreated.getClass() == ex.getClass()
				&& Objects.equals(normalized(recreated.getMessage()), normalized(ex.getMessage()))) {
			return true;
		}
		logger.warn(ex.getClass().getName() + " thrown by " + policy.name() + " for key '" + clientKey
				+ "' is listed in cacheFor but cannot be recreated with its message (it needs a public constructor "
				+ "taking a String message, or none); the key was released, so a retry runs the method again");
		return false;
	}

	private static String normalized(@Nullable String message) {
		return (message != null) ? message : "";
	}

	private static StoredResult errorOutcome(Throwable ex) {
		String message = (ex.getMessage() != null) ? ex.getMessage() : "";
		return new StoredResult(concat(ERROR, ex.getClass().getName() + "\n" + message));
	}

	private static StoredResult unstorable(String reason) {
		return new StoredResult(concat(UNSTORABLE, reason));
	}

	private static byte[] concat(byte marker, String text) {
		byte[] utf8 = text.getBytes(StandardCharsets.UTF_8);
		byte[] bytes = new byte[utf8.length + 1];
		bytes[0] = marker;
		System.arraycopy(utf8, 0, bytes, 1, utf8.length);
		return bytes;
	}

	private Object replay(IdempotencyPolicy policy, String clientKey, StoredResult result) throws Throwable {
		byte[] bytes = result.bytes();
		if (bytes.length > 0 && bytes[0] == VALUE) {
			try {
				return policy.codec().decode(bytes, 1, bytes.length - 1);
			}
			catch (RuntimeException ex) {
				throw new IdempotencyResultException("Stored result of " + policy.name() + " for key '" + clientKey
						+ "' does not decode into the method's return type (was it changed since?); "
						+ "the call is not run again. Send a new key to run it", ex);
			}
		}
		String text = new String(bytes, 1, Math.max(0, bytes.length - 1), StandardCharsets.UTF_8);
		if (bytes.length > 0 && bytes[0] == ERROR) {
			throw storedError(policy, clientKey, text);
		}
		throw new IdempotencyResultException(text);
	}

	private Throwable storedError(IdempotencyPolicy policy, String clientKey, String text) {
		int newline = text.indexOf('\n');
		String typeName = text.substring(0, newline);
		String message = text.substring(newline + 1);
		// Only types the annotation lists are instantiated: the stored name picks among
		// them, it never loads an arbitrary class.
		for (Class<? extends Throwable> allowed : policy.cacheFor()) {
			try {
				Class<?> type = ClassUtils.forName(typeName, allowed.getClassLoader());
				if (allowed.isAssignableFrom(type)) {
					return instantiate(type, message);
				}
			}
			catch (ReflectiveOperationException | LinkageError ex) {
				// try the next allowed type
			}
		}
		return new IdempotencyResultException("Stored error " + typeName + " of " + policy.name() + " for key '"
				+ clientKey + "' is no longer listed in cacheFor or cannot be created: " + message);
	}

	private static Throwable instantiate(Class<?> type, String message) throws ReflectiveOperationException {
		try {
			return (Throwable) ReflectionUtils.accessibleConstructor(type, String.class).newInstance(message);
		}
		catch (NoSuchMethodException ex) {
			return (Throwable) ReflectionUtils.accessibleConstructor(type).newInstance();
		}
	}

	/**
	 * Whether an exception type can be recreated from a stored outcome, which
	 * {@code cacheFor} requires.
	 */
	public static boolean isRecreatable(Class<? extends Throwable> type) {
		for (Class<?>[] parameters : new Class<?>[][] { { String.class }, {} }) {
			try {
				type.getDeclaredConstructor(parameters);
				return true;
			}
			catch (NoSuchMethodException ex) {
				// try the next form
			}
		}
		return false;
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
	 * The encoded result behind its marker byte, copied as little as possible: the codec
	 * writes through its own buffer, so a result that fits in that buffer (8 KB with
	 * Jackson) arrives in one write, which is copied once into an array of exactly the
	 * final size, and that array is stored as it is. A larger result arrives in a few
	 * chunks, each copied once and joined once. Bytes past {@code limit} are counted, not
	 * kept.
	 */
	private static final class ResultBuffer extends OutputStream {

		private final byte marker;

		private final long limit;

		private byte @Nullable [] first;

		private @Nullable List<byte[]> more;

		private long size = 1;

		ResultBuffer(byte marker, long limit) {
			this.marker = marker;
			this.limit = limit;
		}

		@Override
		public void write(int b) {
			write(new byte[] { (byte) b }, 0, 1);
		}

		@Override
		public void write(byte[] b, int off, int len) {
			if (len == 0) {
				return;
			}
			this.size += len;
			if (this.size > this.limit) {
				this.first = null;
				this.more = null;
			}
			else if (this.first == null) {
				byte[] first = new byte[len + 1];
				first[0] = this.marker;
				System.arraycopy(b, off, first, 1, len);
				this.first = first;
			}
			else {
				if (this.more == null) {
					this.more = new ArrayList<>();
				}
				this.more.add(Arrays.copyOfRange(b, off, off + len));
			}
		}

		long size() {
			return this.size;
		}

		byte[] bytes() {
			byte[] first = this.first;
			if (first == null) {
				return new byte[] { this.marker };
			}
			if (this.more == null) {
				return first;
			}
			byte[] all = new byte[(int) this.size];
			System.arraycopy(first, 0, all, 0, first.length);
			int position = first.length;
			for (byte[] chunk : this.more) {
				System.arraycopy(chunk, 0, all, position, chunk.length);
				position += chunk.length;
			}
			return all;
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
