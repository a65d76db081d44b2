package io.github.idempotent.store.jdbc;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Reports a table of the JDBC store that is missing or lacks a column in Spring Boot's
 * "APPLICATION FAILED TO START" box, rather than inside a chain of bean creation
 * exceptions. Registered in {@code META-INF/spring.factories}.
 */
class JdbcTableFailureAnalyzer extends AbstractFailureAnalyzer<JdbcTableException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, JdbcTableException cause) {
		return new FailureAnalysis(cause.getDescription(), cause.getAction(), cause);
	}

}
