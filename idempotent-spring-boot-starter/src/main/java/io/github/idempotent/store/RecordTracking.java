package io.github.idempotent.store;

import java.time.Duration;
import java.util.concurrent.CompletionStage;

import org.jspecify.annotations.Nullable;

/**
 * Optional companion of a store that tells a local cache when records change on the
 * server. Once {@link #read} has returned a record, any later change of it is reported to
 * the {@link Listener} by the time {@link #isCurrent()} next answers {@code true}; when
 * changes may have been missed, it reports {@link Listener#invalidatedAll()}.
 */
public interface RecordTracking extends AutoCloseable {

	/** Starts tracking, once; changes are reported to {@code listener} on any thread. */
	void start(Listener listener);

	/** Whether tracking can work in this setup at all. */
	default boolean isSupported() {
		return true;
	}

	/**
	 * Whether every change up to the tracker's maximum delay ago has been reported;
	 * called on every cache hit.
	 */
	boolean isCurrent();

	/** Name of {@code key} in the reports of {@link Listener#invalidated}. */
	String trackingKey(RecordKey key);

	/**
	 * Reads {@code key} so that its later changes are reported; {@code null} unless it
	 * holds a completed record, never exceptionally.
	 */
	CompletionStage<@Nullable TrackedRecord> read(RecordKey key);

	@Override
	void close();

	/** A completed record as the tracker read it, with the time it had left then. */
	record TrackedRecord(Fingerprint fingerprint, StoredResult result, Duration timeToLive) {
	}

	/** Receives the reports. */
	interface Listener {

		/** The record named {@code trackingKey} changed, or may have. */
		void invalidated(String trackingKey);

		/** Any record may have changed. */
		void invalidatedAll();

	}

}
