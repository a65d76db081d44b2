package io.github.idempotent.autoconfigure;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

/**
 * Local cache of completed results in front of the store (needs Caffeine).
 *
 * @param enabled Whether completed results are also kept in this JVM. Unset: on for the
 * Redis store while invalidation tracking is established, off for the others.
 * @param maximumSize Largest total size of the results kept in the local cache, with
 * their keys.
 * @param ttl Longest time a result stays in the local cache; keep it below the
 * shortest @Idempotent ttl.
 * @param maxStaleness Longest time a result changed in Redis may still be replayed from
 * the local cache.
 */
public record IdempotentLocalCacheProperties(@Nullable Boolean enabled, @DefaultValue("16MB") DataSize maximumSize,
		@DefaultValue("1m") Duration ttl, @DefaultValue("500ms") Duration maxStaleness) {

}
