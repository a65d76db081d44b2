/**
 * Redis store: one string per record ({@code RecordLayout}), one atomic step per
 * primitive, a native {@code SET ... NX GET} or a Lua script. Runs on every client of
 * Spring Data Redis; what only Lettuce can do is in classes loaded only on a Lettuce
 * connection factory.
 */
package io.github.idempotent.store.redis;
