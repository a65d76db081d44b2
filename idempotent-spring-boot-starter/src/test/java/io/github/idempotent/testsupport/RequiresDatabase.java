package io.github.idempotent.testsupport;

import java.io.IOException;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;

import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.platform.commons.support.AnnotationSupport;

/**
 * Runs a test class or method only when its database server answers, as the demo's tests
 * do. Skipping (reported as skipped) is for a developer's machine: on CI
 * ({@code CI=true}) a database that does not answer fails the test instead.
 */
@Target({ ElementType.TYPE, ElementType.METHOD })
@Retention(RetentionPolicy.RUNTIME)
@ExtendWith(RequiresDatabase.Condition.class)
public @interface RequiresDatabase {

	Database value();

	enum Database {

		POSTGRESQL("PostgreSQL") {
			@Override
			String url() {
				return TestDatabases.postgresqlUrl();
			}
		},

		MARIADB("MariaDB") {
			@Override
			String url() {
				return TestDatabases.mariadbUrl();
			}
		};

		private final String displayName;

		Database(String displayName) {
			this.displayName = displayName;
		}

		abstract String url();

	}

	class Condition implements ExecutionCondition {

		@Override
		public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
			RequiresDatabase required = AnnotationSupport.findAnnotation(context.getElement(), RequiresDatabase.class)
				.orElse(null);
			if (required == null) {
				return ConditionEvaluationResult.enabled("no database required");
			}
			Database database = required.value();
			URI uri = URI.create(database.url().substring("jdbc:".length()));
			String where = database.displayName + " at " + uri.getHost() + ":" + uri.getPort();
			if (answers(uri.getHost(), uri.getPort())) {
				return ConditionEvaluationResult.enabled(where + " answers");
			}
			if ("true".equalsIgnoreCase(System.getenv("CI"))) {
				throw new IllegalStateException(where + " does not answer, and on CI (CI=true) the JDBC store's "
						+ "tests must run against it: start it before the build");
			}
			return ConditionEvaluationResult.disabled(where + " does not answer (not on CI): skipped");
		}

		private static boolean answers(String host, int port) {
			try (Socket socket = new Socket()) {
				socket.connect(new InetSocketAddress(host, port), 1000);
				return true;
			}
			catch (IOException ex) {
				return false;
			}
		}

	}

}
