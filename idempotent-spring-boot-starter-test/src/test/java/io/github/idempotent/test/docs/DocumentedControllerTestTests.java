package io.github.idempotent.test.docs;

import java.io.IOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.core.NestedExceptionUtils;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

/**
 * The controller test of docs/testing.md, as a reader copies it, runs against the
 * controller of the README: both blocks are compiled as they are, beside the application
 * class every Spring Boot application has, and the test is run.
 */
@ExtendWith(OutputCaptureExtension.class)
class DocumentedControllerTestTests {

	private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

	/**
	 * What the README's block leaves out, as every Java block of the docs may: the JDK's
	 * and Spring's everyday types (see the starter's DocumentedJavaSnippetsTests).
	 */
	private static final String EVERYDAY_IMPORTS = "import java.math.*; import org.springframework.http.*; "
			+ "import org.springframework.web.bind.annotation.*;\n";

	@TempDir
	Path work;

	@Test
	void theControllerTestOfTheDocsPassesAgainstTheReadmesController(CapturedOutput output) throws Exception {
		Path sources = Files.createDirectories(this.work.resolve("src/com/example"));
		Files.writeString(sources.resolve("PaymentController.java"),
				"package com.example;\n" + EVERYDAY_IMPORTS + javaBlock("README.md", "class PaymentController"));
		Files.writeString(sources.resolve("PaymentControllerTests.java"),
				"package com.example;\n" + javaBlock("docs/testing.md", "@WebMvcTest(PaymentController.class)"));
		Files.writeString(sources.resolve("PaymentApplication.java"), """
				package com.example;
				@org.springframework.boot.autoconfigure.SpringBootApplication
				class PaymentApplication {
				}
				""");
		Path classes = Files.createDirectories(this.work.resolve("classes"));
		assertThat(compile(sources, classes)).as("errors compiling the README's controller and the docs' test")
			.isEmpty();

		TestExecutionSummary summary = run(classes, "com.example.PaymentControllerTests");
		List<String> failures = new ArrayList<>();
		summary.getFailures()
			.forEach((failure) -> failures.add(failure.getTestIdentifier().getDisplayName() + ": "
					+ NestedExceptionUtils.getMostSpecificCause(failure.getException())));
		assertThat(failures).as("failures of the docs' controller test").isEmpty();
		assertThat(summary.getTestsSucceededCount()).as("tests of the docs' controller test that passed").isEqualTo(2);
		// What the README says this example logs without Spring Security.
		assertThat(output).contains("@Idempotent methods [com.example.PaymentController#pay] take their key from the "
				+ "request header, and every caller shares one scope");
	}

	/**
	 * The first {@code java} block of a document that contains {@code marker}.
	 */
	private static String javaBlock(String document, String marker) throws IOException {
		List<String> lines = Files.readAllLines(ROOT.resolve(document), StandardCharsets.UTF_8);
		for (int i = 0; i < lines.size(); i++) {
			if (!lines.get(i).trim().equals("```java")) {
				continue;
			}
			StringBuilder block = new StringBuilder();
			while (++i < lines.size() && !lines.get(i).trim().startsWith("```")) {
				block.append(lines.get(i)).append('\n');
			}
			if (block.indexOf(marker) >= 0) {
				return block.toString();
			}
		}
		throw new AssertionError(document + " has no java block with " + marker);
	}

	private static List<String> compile(Path sources, Path classes) throws IOException {
		JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
		DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
		try (StandardJavaFileManager files = compiler.getStandardFileManager(null, null, StandardCharsets.UTF_8);
				var paths = Files.list(sources)) {
			List<String> options = List.of("-proc:none", "-parameters", "-classpath",
					System.getProperty("java.class.path"), "-d", classes.toString());
			compiler.getTask(null, files, diagnostics, options, null, files.getJavaFileObjectsFromPaths(paths.toList()))
				.call();
		}
		return diagnostics.getDiagnostics()
			.stream()
			.filter((diagnostic) -> diagnostic.getKind() == Diagnostic.Kind.ERROR)
			.map((diagnostic) -> diagnostic.getSource().getName() + ":" + diagnostic.getLineNumber() + ": "
					+ diagnostic.getMessage(Locale.ROOT))
			.toList();
	}

	/**
	 * Runs a test class as the build would, from a class loader that sees the compiled
	 * classes (the thread's too, which Spring scans with).
	 */
	private static TestExecutionSummary run(Path classes, String testClass) throws Exception {
		Thread thread = Thread.currentThread();
		ClassLoader previous = thread.getContextClassLoader();
		try (URLClassLoader loader = new URLClassLoader(new URL[] { classes.toUri().toURL() },
				DocumentedControllerTestTests.class.getClassLoader())) {
			thread.setContextClassLoader(loader);
			LauncherDiscoveryRequest request = LauncherDiscoveryRequestBuilder.request()
				.selectors(selectClass(loader.loadClass(testClass)))
				.build();
			SummaryGeneratingListener listener = new SummaryGeneratingListener();
			LauncherFactory.create().execute(request, listener);
			return listener.getSummary();
		}
		finally {
			thread.setContextClassLoader(previous);
		}
	}

}
