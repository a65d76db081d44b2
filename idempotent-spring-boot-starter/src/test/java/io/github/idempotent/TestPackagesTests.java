package io.github.idempotent;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The starter's test packages mirror its main packages (CONTRIBUTING.md, "Layout"): a
 * class's tests are found where the class lives. Three test packages have no main
 * counterpart, on purpose: the shared test infrastructure, the tests of the docs, and the
 * chaos campaign.
 */
class TestPackagesTests {

	private static final Path MAIN = Path.of("src/main/java/io/github/idempotent");

	private static final List<Path> TESTS = List.of(Path.of("src/test/java/io/github/idempotent"),
			Path.of("src/test/kotlin/io/github/idempotent"));

	private static final Set<String> WITHOUT_MAIN_COUNTERPART = Set.of("testsupport", "docs", "chaos");

	/**
	 * A top-level class that scans its package, its annotation written short or in full.
	 */
	private static final Pattern SCANNING_APPLICATION = Pattern.compile(
			"(?m)^@(org\\.springframework\\.(boot\\.autoconfigure|context\\.annotation)\\.)?(SpringBootApplication|ComponentScan)\\b");

	private static final Pattern APPLICATION = Pattern.compile(
			"(?m)^@(org\\.springframework\\.boot\\.(autoconfigure\\.)?)?(SpringBootApplication|SpringBootConfiguration)\\b");

	@Test
	void everyTestPackageIsAMainPackageOrADocumentedException() throws IOException {
		Set<String> main = packages(MAIN).keySet();
		Set<String> strays = new TreeSet<>();
		for (Path root : TESTS) {
			for (String test : packages(root).keySet()) {
				String top = test.isEmpty() ? "" : test.split("\\.")[0];
				if (!test.isEmpty() && !main.contains(test) && !WITHOUT_MAIN_COUNTERPART.contains(top)) {
					strays.add(test);
				}
			}
		}
		assertThat(main).contains("web", "core", "store.redis");
		assertThat(strays).as("test packages without a main package of that name").isEmpty();
	}

	/**
	 * An application that scans its package finds every other application and controller
	 * in it: two test applications of one package each import what they serve instead.
	 */
	@Test
	void aTestApplicationThatScansItsPackageIsItsPackagesOnlyApplication() throws IOException {
		Map<String, List<String>> crowded = new TreeMap<>();
		for (Path root : TESTS) {
			packages(root).forEach((name, files) -> {
				List<String> applications = files.stream()
					.filter((file) -> matches(file, APPLICATION))
					.map((file) -> file.getFileName().toString())
					.toList();
				if (applications.size() > 1 && files.stream().anyMatch((file) -> matches(file, SCANNING_APPLICATION))) {
					crowded.put(name, applications);
				}
			});
		}
		assertThat(crowded).as("packages with a scanning application beside other applications").isEmpty();
	}

	private static Map<String, List<Path>> packages(Path root) throws IOException {
		assertThat(root).isDirectory();
		try (Stream<Path> files = Files.walk(root)) {
			return files.filter(Files::isRegularFile)
				.filter((file) -> file.toString().endsWith(".java") || file.toString().endsWith(".kt"))
				.collect(
						Collectors.groupingBy(
								(file) -> root.relativize(file.getParent())
									.toString()
									.replace(root.getFileSystem().getSeparator(), "."),
								TreeMap::new, Collectors.toList()));
		}
	}

	private static boolean matches(Path file, Pattern pattern) {
		try {
			return pattern.matcher(Files.readString(file)).find();
		}
		catch (IOException ex) {
			throw new IllegalStateException(file.toString(), ex);
		}
	}

}
