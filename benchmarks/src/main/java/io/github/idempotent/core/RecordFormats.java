package io.github.idempotent.core;

import java.util.function.Function;
import java.util.function.UnaryOperator;

import io.github.idempotent.store.StoredResult;

/**
 * The record format's encoding steps, which the size and compression benchmarks measure
 * on their own: in the starter's package, since these steps are not its API.
 */
public final class RecordFormats {

	/** The threshold of no compression. */
	public static final long NONE = -1;

	private RecordFormats() {
	}

	/**
	 * A response as a first call stores it, deflated when larger than
	 * {@code thresholdBytes}, without the size limit.
	 */
	public static Function<RecordedResponse, StoredResult> storing(long thresholdBytes) {
		ResultCompression compression = compression(thresholdBytes);
		return (response) -> response.toStoredResult(compression);
	}

	/** A value outcome as a first call stores it, deflated when larger. */
	public static UnaryOperator<StoredResult> compressingValues(long thresholdBytes) {
		return compression(thresholdBytes)::compress;
	}

	private static ResultCompression compression(long thresholdBytes) {
		return (thresholdBytes >= 0) ? ResultCompression.deflate(thresholdBytes) : ResultCompression.none();
	}

}
