package io.github.idempotent.testsupport;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.TestSource;
import org.junit.platform.engine.TestExecutionResult.Status;
import org.junit.platform.engine.support.descriptor.ClassSource;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;

/**
 * Prints every skipped test of the starter, with its reason, on the console of the build.
 * Surefire shows only {@code Skipped: 1} there and keeps the reason in
 * {@code target/surefire-reports}, and with {@code redirectTestOutputToFile} a test's
 * {@code System.out} and {@code System.err} go to a file as well. The forked test JVM's
 * native standard error is what Surefire copies to Maven's console, so the line is
 * written there. Registered in {@code META-INF/services}; it changes no test's outcome.
 */
public class SkippedTestsConsoleReport implements TestExecutionListener {

	private static final PrintStream CONSOLE = new PrintStream(new FileOutputStream(FileDescriptor.err), true,
			StandardCharsets.UTF_8);

	/**
	 * A disabled test or class ({@code @Disabled}, an {@code ExecutionCondition} such as
	 * {@link RequiresDatabase}).
	 */
	@Override
	public void executionSkipped(TestIdentifier identifier, String reason) {
		report(identifier, reason);
	}

	/**
	 * An aborted test: a failed assumption ({@code Assumptions.assumeTrue}).
	 */
	@Override
	public void executionFinished(TestIdentifier identifier, TestExecutionResult result) {
		if (result.getStatus() == Status.ABORTED) {
			report(identifier, result.getThrowable().map(Throwable::getMessage).orElse(null));
		}
	}

	private static void report(TestIdentifier identifier, String reason) {
		CONSOLE.println("[WARNING] Skipped " + name(identifier) + ": "
				+ ((reason != null && !reason.isBlank()) ? reason : "no reason given"));
	}

	private static String name(TestIdentifier identifier) {
		TestSource source = identifier.getSource().orElse(null);
		if (source instanceof MethodSource method) {
			return method.getClassName() + "." + method.getMethodName();
		}
		if (source instanceof ClassSource type) {
			return type.getClassName();
		}
		return identifier.getDisplayName();
	}

}
