/**
 * Redis store: one hash per record, one Lua script per primitive.
 */
package io.github.idempotent.store.redis;
