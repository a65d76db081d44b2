/**
 * Redis store: one string per record, record format 1
 * ({@link io.github.idempotent.store.redis.RecordLayout}), one atomic step per primitive,
 * a native {@code SET ... NX GET} or a Lua script.
 * <p>
 * Where each concern is: {@link io.github.idempotent.store.redis.RedisIdempotencyStore}
 * claims, completes, releases and renews; {@code RedisScripts} holds the scripts, read
 * from the {@code .lua} files next to it; {@code RedisScriptRunner} sends them (by SHA-1,
 * again in full after {@code NOSCRIPT}, on the connection that may wait for replicas);
 * the Actuator's inspection is {@code RedisRecordInspection}; the local cache's
 * invalidation is {@code RedisRecordTracking}; the check of the server's eviction policy
 * is {@code RedisMemoryPolicy}.
 * <p>
 * Every client of Spring Data Redis: {@code RedisClients} tells which one runs; what only
 * Lettuce can do is in classes loaded only on a Lettuce connection factory
 * ({@code LettuceCommands} the asynchronous calls, {@code LettuceScan} the Actuator's
 * SCAN, {@code DedicatedConnections} WAIT, {@code RedisRecordTracking} the local cache's
 * invalidation), so that a Jedis or Redisson application never loads a Lettuce type.
 */
package io.github.idempotent.store.redis;
