/** In-memory store for one JVM and for tests. */
package io.github.idempotent.store.memory;
