/**
 * Redis store: one string per record
 * ({@link io.github.idempotent.store.redis.RecordLayout}), one atomic step per primitive,
 * a native {@code SET ... NX GET} or a Lua script.
 * <p>
 * Where each concern is: {@link io.github.idempotent.store.redis.RedisIdempotencyStore}
 * claims, completes, releases and renews; {@code RedisScripts} holds the scripts, read
 * from the {@code .lua} files next to it; {@code RedisScriptRunner} sends them (by SHA-1,
 * again in full after {@code NOSCRIPT}, on the connection that may wait for replicas);
 * the Actuator's inspection is {@code RedisRecordInspection}; records of the previous
 * hash layout are read by {@code PreviousRecordLayout}; the local cache's invalidation is
 * {@code RedisRecordTracking}; the check of the server's eviction policy is
 * {@code RedisMemoryPolicyGuard}.
 */
package io.github.idempotent.store.redis;
