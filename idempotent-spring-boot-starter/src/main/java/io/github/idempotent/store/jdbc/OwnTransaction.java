package io.github.idempotent.store.jdbc;

import java.util.function.Supplier;

import javax.sql.DataSource;

import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.TransactionSystemException;
import org.springframework.transaction.support.TransactionCallback;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * How the work of a {@link JdbcIdempotencyStore} that must commit on its own (claims,
 * releases, renewals, purges) runs, even when the caller is in a transaction on the same
 * {@link DataSource}: a claim must be visible to concurrent duplicates at once.
 */
final class OwnTransaction {

	private final DataSource dataSource;

	private final TransactionTemplate template;

	OwnTransaction(DataSource dataSource, PlatformTransactionManager transactionManager) {
		this.dataSource = dataSource;
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
	 * another connection.
	 */
	<T> T run(Supplier<T> action) {
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
