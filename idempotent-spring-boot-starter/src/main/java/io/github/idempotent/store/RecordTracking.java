package io.github.idempotent.store;

import java.time.Duration;
import java.util.concurrent.CompletionStage;

import org.jspecify.annotations.Nullable;

/**
 * Optional companion of a store that tells a local cache in front of it when records
 * change on the server, whoever changes them (another instance, an operator, expiry). The
 * Redis store's is built on Redis's server-assisted client-side caching.
 * <p>
 * The contract a cache relies on: once {@link #read} has returned a record, any later
 * change of that record on the server is reported to the {@link Listener} by the time
 * {@link #isCurrent()} next answers {@code true} with a confirmation sent after that
 * change; when the tracker cannot promise that (its connection broke, or its
 * confirmations are late), {@link #isCurrent()} answers {@code false}, and when changes
 * may have been missed it reports {@link Listener#invalidatedAll()}.
 */
public interface RecordTracking extends AutoCloseable {

	/**
	 * Starts tracking; changes are reported to {@code listener} from then on, on any
	 * thread. Called once.
	 */
	void start(Listener listener);

	/**
	 * Whether tracking can work in this setup at all; when it cannot (Redis Cluster),
	 * {@link #isCurrent()} is always {@code false}.
	 */
	default boolean isSupported() {
		return true;
	}

	/**
	 * Whether every change the server made to a tracked record up to a bounded time ago
	 * (the tracker's maximum delay) has been reported. Cheap: called on every cache hit.
	 */
	boolean isCurrent();

	/**
	 * Name of {@code key} in the reports of {@link Listener#invalidated}.
	 */
	String trackingKey(RecordKey key);

	/**
	 * Reads {@code key} so that its later changes are reported; completes with
	 * {@code null} when the key holds no completed record (absent, in progress, or not
	 * readable by the tracker), and never exceptionally.
	 */
	CompletionStage<@Nullable TrackedRecord> read(RecordKey key);

	@Override
	void close();

	/**
	 * A completed record as the tracker read it, with the time it had left then.
	 */
	record TrackedRecord(Fingerprint fingerprint, StoredResult result, Duration timeToLive) {
	}

	/**
	 * Receives the reports.
	 */
	interface Listener {

		/**
		 * The record named {@code trackingKey} changed, or may have.
		 */
		void invalidated(String trackingKey);

		/**
		 * Any record may have changed: tracking was lost or restarted, or the server was
		 * flushed.
		 */
		void invalidatedAll();

	}

}
