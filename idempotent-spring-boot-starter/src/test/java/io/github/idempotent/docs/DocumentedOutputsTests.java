package io.github.idempotent.docs;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every HTTP exchange the READMEs and docs/ show is compared with what the code sends, or
 * says why not. The curl sessions of docs/demo.md and of the section "A curl session" of
 * docs/http.md are run by the demo's {@code DocumentedDemoTests} and
 * {@code DocumentedHttpSessionTests}; any other block with a curl command or a status
 * line names the test that compares it, {@code <!-- compared by SomeTests -->}, or says
 * why nothing does, {@code <!-- not compared: the reason -->}, on the line before its
 * fence.
 */
class DocumentedOutputsTests {

	private static final Pattern FENCE = Pattern.compile("^\\s*```.*$");

	private static final Pattern EXCHANGE = Pattern.compile("^\\s*(\\$ )?curl .*|^HTTP/1\\.1 \\d{3}.*");

	private static final Pattern NOT_COMPARED = Pattern.compile("^\\s*<!--\\s*not compared:\\s*\\S.*-->\\s*$");

	private static final Pattern COMPARED_BY = Pattern.compile("^\\s*<!--\\s*compared by (\\w+)\\b.*-->\\s*$");

	private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

	@Test
	void everyExchangeOfTheDocsIsComparedOrSaysWhyNot() throws IOException {
		List<String> unaccounted = new ArrayList<>();
		for (Path document : DocumentedJavaSnippetsTests.documents()) {
			List<String> lines = Files.readAllLines(document, StandardCharsets.UTF_8);
			String name = ROOT.relativize(document).toString().replace('\\', '/');
			String section = "";
			for (int i = 0; i < lines.size(); i++) {
				if (lines.get(i).startsWith("## ")) {
					section = lines.get(i);
				}
				if (!FENCE.matcher(lines.get(i)).matches()) {
					continue;
				}
				int fence = i;
				boolean exchange = false;
				while (++i < lines.size() && !FENCE.matcher(lines.get(i)).matches()) {
					exchange |= EXCHANGE.matcher(lines.get(i)).matches();
				}
				if (!exchange || runByTheDemoTests(name, section)) {
					continue;
				}
				String marker = (fence > 0) ? lines.get(fence - 1) : "";
				Matcher comparedBy = COMPARED_BY.matcher(marker);
				if (comparedBy.matches()) {
					assertThat(testExists(comparedBy.group(1)))
						.as(name + ":" + fence + " names a test that exists: " + comparedBy.group(1))
						.isTrue();
				}
				else if (!NOT_COMPARED.matcher(marker).matches()) {
					unaccounted.add(name + ":" + (fence + 1));
				}
			}
		}
		assertThat(unaccounted).as("blocks with an HTTP exchange that no test compares and that do not say why")
			.isEmpty();
	}

	private static boolean runByTheDemoTests(String document, String section) {
		return document.equals("docs/demo.md")
				|| (document.equals("docs/http.md") && section.equals("## A curl session"));
	}

	private static boolean testExists(String name) throws IOException {
		try (Stream<Path> files = Files.walk(ROOT, 12)) {
			return files.anyMatch((file) -> file.getFileName().toString().equals(name + ".java")
					&& file.toString().contains("src" + java.io.File.separator + "test"));
		}
	}

}
