/** A local cache of completed results in front of any store, on Caffeine. */
package io.github.idempotent.store.cache;
