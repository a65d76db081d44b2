/**
 * A local cache of completed results in front of any store (Caffeine, which the starter
 * brings).
 */
package io.github.idempotent.store.cache;
