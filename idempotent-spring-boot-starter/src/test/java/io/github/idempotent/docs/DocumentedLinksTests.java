package io.github.idempotent.docs;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every relative link of the READMEs, CONTRIBUTING.md, CHANGELOG.md, docs/ and
 * benchmarks/ ({@code [text](path#anchor)}) names a file that exists and, for a Markdown
 * file, a heading of it (its GitHub anchor) or an {@code <a name="...">}.
 */
class DocumentedLinksTests {

	private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

	private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)(?:\\s+\"[^\"]*\")?\\)");

	private static final Pattern HEADING = Pattern.compile("^#{1,6}\\s+(.*?)\\s*#*\\s*$");

	private static final Pattern NAMED_ANCHOR = Pattern.compile("<a (?:name|id)=\"([^\"]+)\"");

	@TempDir
	Path temp;

	@Test
	void everyRelativeLinkOfTheDocsResolves() throws IOException {
		List<Path> documents = new ArrayList<>();
		try (Stream<Path> top = Files.list(ROOT)) {
			top.filter((path) -> path.getFileName().toString().endsWith(".md")).forEach(documents::add);
		}
		for (String folder : List.of("docs", "benchmarks")) {
			try (Stream<Path> files = Files.list(ROOT.resolve(folder))) {
				files.filter((path) -> path.getFileName().toString().endsWith(".md")).forEach(documents::add);
			}
		}
		assertThat(documents).as("Markdown files from " + ROOT).hasSizeGreaterThan(10);
		List<String> broken = new ArrayList<>();
		for (Path document : documents) {
			broken.addAll(brokenLinks(document));
		}
		assertThat(broken).as("relative links that name no file or no heading").isEmpty();
	}

	@Test
	void aLinkToAMissingHeadingIsReportedWithItsFileAndLine() throws IOException {
		Path target = Files.writeString(this.temp.resolve("target.md"), "# Title\n\n## The `Retry-After` header\n");
		Path document = Files.writeString(this.temp.resolve("source.md"),
				"See [it](target.md#the-retry-after-header) and `[not](a-link.md)`.\n\n"
						+ "Then [this](target.md#gone) and [that](missing.md).\n");
		assertThat(brokenLinks(document)).containsExactly(document + ":3: no heading for target.md#gone",
				document + ":3: no file for missing.md");
		assertThat(anchors(target)).contains("title", "the-retry-after-header");
	}

	private static List<String> brokenLinks(Path document) throws IOException {
		List<String> broken = new ArrayList<>();
		List<String> lines = Files.readAllLines(document, StandardCharsets.UTF_8);
		boolean fenced = false;
		for (int i = 0; i < lines.size(); i++) {
			String line = lines.get(i);
			if (line.trim().startsWith("```")) {
				fenced = !fenced;
				continue;
			}
			if (fenced) {
				continue;
			}
			Matcher link = LINK.matcher(line.replaceAll("`[^`]*`", "``"));
			while (link.find()) {
				String target = link.group(1);
				if (target.matches("^[a-z]+:.*")) {
					continue;
				}
				int hash = target.indexOf('#');
				String file = (hash < 0) ? target : target.substring(0, hash);
				Path resolved = file.isEmpty() ? document : document.getParent().resolve(file).normalize();
				if (!Files.exists(resolved)) {
					broken.add(document + ":" + (i + 1) + ": no file for " + target);
				}
				else if (hash >= 0 && (file.isEmpty() || file.endsWith(".md"))) {
					if (!anchors(resolved).contains(target.substring(hash + 1))) {
						broken.add(document + ":" + (i + 1) + ": no heading for " + target);
					}
				}
			}
		}
		return broken;
	}

	/**
	 * The anchors GitHub gives a Markdown file's headings: lower case, punctuation but
	 * {@code -} and {@code _} dropped, spaces as {@code -}, a repeated one numbered.
	 */
	static Set<String> anchors(Path document) throws IOException {
		Set<String> anchors = new HashSet<>();
		Map<String, Integer> seen = new HashMap<>();
		boolean fenced = false;
		for (String line : Files.readAllLines(document, StandardCharsets.UTF_8)) {
			if (line.trim().startsWith("```")) {
				fenced = !fenced;
			}
			Matcher heading = HEADING.matcher(line);
			if (!fenced && heading.matches()) {
				String text = heading.group(1).toLowerCase(Locale.ROOT).replaceAll("\\]\\([^)]*\\)", "]");
				StringBuilder slug = new StringBuilder();
				text.codePoints()
					.filter((c) -> Character.isLetterOrDigit(c) || c == ' ' || c == '-' || c == '_')
					.forEach((c) -> slug.appendCodePoint((c == ' ') ? '-' : c));
				int count = seen.merge(slug.toString(), 1, Integer::sum);
				anchors.add((count == 1) ? slug.toString() : slug + "-" + (count - 1));
			}
			Matcher named = NAMED_ANCHOR.matcher(line);
			while (named.find()) {
				anchors.add(named.group(1));
			}
		}
		return anchors;
	}

}
