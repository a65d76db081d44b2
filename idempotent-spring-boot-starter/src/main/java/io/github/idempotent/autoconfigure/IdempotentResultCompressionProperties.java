package io.github.idempotent.autoconfigure;

import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

/**
 * Compression of stored results, under {@code idempotent.result-compression}.
 *
 * @param enabled Whether results larger than the threshold are stored deflated.
 * @param threshold Size above which an encoded result is compressed; below 1 KB deflating
 * costs more than it saves (docs/benchmarks.md).
 */
public record IdempotentResultCompressionProperties(@DefaultValue("true") boolean enabled,
		@DefaultValue("1KB") DataSize threshold) {

}
