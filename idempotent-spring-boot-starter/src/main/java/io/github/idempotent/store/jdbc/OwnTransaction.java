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
 * Runs the work of a {@link JdbcIdempotencyStore} that must commit on its own (claims,
 * releases, renewals, purges), even inside a caller's transaction on the same
 * {@link DataSource}. A serialization failure or deadlock rolled the statement back: the
 * work, written to be sent again, is sent again.
 */
final class OwnTransaction {

	// A serialization failure means another transaction committed a change of the row.
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
	 * As autocommit statements when no transaction holds a connection of this data source
	 * on this thread, else in a new transaction.
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
			// A broken connection leaves a transaction that cannot be rolled back either:
			// the statement's failure says what happened.
			if (ex.getApplicationException() instanceof RuntimeException failure) {
				failure.addSuppressed(ex);
				throw failure;
			}
			throw ex;
		}
	}

	/** In a new READ COMMITTED transaction, also when the caller has none. */
	<T> T runInTransaction(TransactionCallback<T> action) {
		return this.template.execute(action);
	}

	/** Sleeps; {@code false} if interrupted, the thread's flag set again. */
	static boolean pause(long millis) {
		try {
			Thread.sleep(millis);
			return true;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
	}

}
