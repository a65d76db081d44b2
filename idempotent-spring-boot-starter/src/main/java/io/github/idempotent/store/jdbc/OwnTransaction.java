package io.github.idempotent.store.jdbc;

import java.util.function.Supplier;

import javax.sql.DataSource;

import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.TransactionSystemException;
import org.springframework.transaction.support.TransactionCallback;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.github.idempotent.store.StoreFullException;

/**
 * How the work of a {@link JdbcIdempotencyStore} that must commit on its own (claims,
 * releases, renewals, purges) runs, even when the caller is in a transaction on the same
 * {@link DataSource}: a claim must be visible to concurrent duplicates at once.
 * <p>
 * The work is correct at every isolation level the pool's connections may have by
 * default: each of its autocommit statements is a transaction of its own, which at
 * REPEATABLE READ or SERIALIZABLE fails with a serialization failure where READ COMMITTED
 * would have waited and read the other transaction's row (PostgreSQL's answer to
 * concurrent first claims of one key); so does a deadlock, at any level. Such a failure
 * rolled the statement back, and the work is sent again, now seeing what the other
 * transaction committed: every step of the store is written to be sent again (a claim
 * reads what is there first, a completion or release that did land finds its own row). A
 * full database is reported as the SPI says it.
 */
final class OwnTransaction {

	/**
	 * How many times work is sent that a serialization failure or a deadlock rolled back:
	 * each failure means another transaction committed a change of the row, which the
	 * next attempt reads.
	 */
	private static final int MAX_ATTEMPTS = 5;

	private final DataSource dataSource;

	private final JdbcRefusals refusals;

	private final TransactionTemplate template;

	OwnTransaction(DataSource dataSource, PlatformTransactionManager transactionManager, JdbcRefusals refusals) {
		this.dataSource = dataSource;
		this.refusals = refusals;
		this.template = new TransactionTemplate(transactionManager);
		this.template.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
		// A claim may read the row twice; under REPEATABLE READ (MySQL's default) the
		// second read would not see the row another claimer just wrote.
		this.template.setIsolationLevel(TransactionDefinition.ISOLATION_READ_COMMITTED);
	}

	/**
	 * Runs {@code action} so that its statements commit on their own: as autocommit
	 * statements when no transaction holds a connection of this data source on this
	 * thread (no transaction overhead on the common path), else in a new transaction on
	 * another connection; again after a serialization failure or a deadlock.
	 * @throws StoreFullException if the database had no room for a write
	 */
	<T> T run(Supplier<T> action) {
		for (int attempt = 1;; attempt++) {
			try {
				return runOnce(action);
			}
			catch (RuntimeException ex) {
				JdbcRefusals.Refusal refusal = this.refusals.of(ex);
				if (refusal == JdbcRefusals.Refusal.FULL) {
					throw JdbcRefusals.full(ex);
				}
				if (refusal != JdbcRefusals.Refusal.CONFLICT || attempt == MAX_ATTEMPTS) {
					throw ex;
				}
			}
		}
	}

	private <T> T runOnce(Supplier<T> action) {
		if (!TransactionSynchronizationManager.hasResource(this.dataSource)) {
			return action.get();
		}
		try {
			return this.template.execute((status) -> action.get());
		}
		catch (TransactionSystemException ex) {
			// A statement whose connection broke leaves a transaction that cannot be
			// rolled back either; the statement's failure is the one that says what
			// happened (the database was unreachable: the executor sends it again).
			if (ex.getApplicationException() instanceof RuntimeException failure) {
				failure.addSuppressed(ex);
				throw failure;
			}
			throw ex;
		}
	}

	/**
	 * Runs {@code action} in a new READ COMMITTED transaction, also when the caller has
	 * none.
	 */
	<T> T runInTransaction(TransactionCallback<T> action) {
		return this.template.execute(action);
	}

}
