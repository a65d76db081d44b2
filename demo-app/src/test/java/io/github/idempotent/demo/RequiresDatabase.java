package io.github.idempotent.demo;

import java.io.IOException;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.net.InetSocketAddress;
import java.net.Socket;

import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.platform.commons.support.AnnotationSupport;

/**
 * Runs a test class only when its database answers. Skipping is for a developer's
 * machine: on CI ({@code CI=true}) a silent database fails the class instead.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@ExtendWith(RequiresDatabase.Condition.class)
@interface RequiresDatabase {

	String name();

	String host() default "127.0.0.1";

	int port();

	class Condition implements ExecutionCondition {

		@Override
		public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
			RequiresDatabase database = AnnotationSupport.findAnnotation(context.getElement(), RequiresDatabase.class)
				.orElse(null);
			if (database == null) {
				return ConditionEvaluationResult.enabled("no database required");
			}
			String where = database.name() + " at " + database.host() + ":" + database.port();
			if (answers(database.host(), database.port())) {
				return ConditionEvaluationResult.enabled(where + " answers");
			}
			if ("true".equalsIgnoreCase(System.getenv("CI"))) {
				throw new IllegalStateException(where + " does not answer, and on CI (CI=true) the demo's tests "
						+ "must run against it: start it before the build");
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
