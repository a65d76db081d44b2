/** JDBC store: one row per record, claimed by an INSERT on its primary key. */
package io.github.idempotent.store.jdbc;
