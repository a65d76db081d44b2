/**
 * JDBC store: one row per record, claimed by an INSERT on its primary key.
 * <p>
 * Where each concern is: {@link io.github.idempotent.store.jdbc.JdbcIdempotencyStore}
 * claims, completes, releases and renews; {@code JdbcStatements} holds every statement,
 * rendered in the {@link io.github.idempotent.store.jdbc.JdbcDialect} of the database;
 * {@code OwnTransaction} runs the work that commits on its own; completions tied to the
 * caller's transaction are {@code TransactionBoundCompletions} and
 * {@code PendingCompletion}; the Actuator's inspection is {@code JdbcStoreInspection};
 * the purge is {@link io.github.idempotent.store.jdbc.JdbcIdempotencyPurger}; owner
 * tokens are {@code ClaimToken}.
 */
package io.github.idempotent.store.jdbc;
