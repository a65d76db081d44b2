/** Redis store: one string per record, on every client of Spring Data Redis. */
package io.github.idempotent.store.redis;
