package io.github.idempotent.store.jdbc;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Reports a missing or incomplete table of the JDBC store in Boot's failure box. */
class JdbcTableFailureAnalyzer extends AbstractFailureAnalyzer<JdbcTableException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, JdbcTableException cause) {
		return new FailureAnalysis(cause.description, cause.action, cause);
	}

}
