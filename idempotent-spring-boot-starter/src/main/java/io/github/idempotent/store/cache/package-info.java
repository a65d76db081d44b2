/**
 * A local cache of completed results in front of any store (Caffeine, optional).
 */
package io.github.idempotent.store.cache;
