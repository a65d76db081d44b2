package io.github.idempotent.autoconfigure;

import org.springframework.util.unit.DataSize;

/**
 * Compression of stored results, under {@code idempotent.result-compression}.
 */
public class IdempotentResultCompressionProperties {

	/**
	 * Whether results larger than the threshold are stored deflated. Compressed records
	 * are replayed whatever this setting.
	 */
	private boolean enabled = true;

	/**
	 * Size above which an encoded result is compressed; a number without a unit is bytes.
	 * Up to 1 KB, deflating costs a first call 6-12 us of CPU and saves less than half of
	 * a record (docs/benchmarks.md, "Compression threshold").
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
