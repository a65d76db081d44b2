package io.github.idempotent.autoconfigure;

import org.springframework.util.unit.DataSize;

/** Compression of stored results, under {@code idempotent.result-compression}. */
public class IdempotentResultCompressionProperties {

	/** Whether results larger than the threshold are stored deflated. */
	private boolean enabled = true;

	/**
	 * Size above which an encoded result is compressed; below 1 KB deflating costs more
	 * than it saves (docs/benchmarks.md).
	 */
	private DataSize threshold = DataSize.ofKilobytes(1);

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public DataSize getThreshold() {
		return this.threshold;
	}

	public void setThreshold(DataSize threshold) {
		this.threshold = threshold;
	}

}
