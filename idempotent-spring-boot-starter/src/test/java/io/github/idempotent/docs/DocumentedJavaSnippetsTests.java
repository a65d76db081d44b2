package io.github.idempotent.docs;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

import com.sun.source.util.JavacTask;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every {@code ```java} block of README.md, README.zh-CN.md and docs/*.md compiles
 * against the starter as it is now.
 * <p>
 * The convention (CONTRIBUTING.md): a block is compiled as the body of a class that
 * extends {@link SnippetContext}, which declares the fields a fragment uses without
 * declaring them, in a file that imports the reader's own types ({@link ReaderTypes}); a
 * block that is not a class body (statements, such as
 * {@code container.setAdviceChain(...)}) is compiled as the body of a method of that
 * class. Its {@code import} lines are the imports of that class, and must name every type
 * of the starter the block uses (the reader has to write them); the JDK's and Spring's
 * everyday types ({@link #IMPLICIT_IMPORTS}) need none. {@code { ... }} and a line of
 * {@code ...} stand for code the reader writes. A block that cannot compile says why in
 * an HTML comment on the line before its fence:
 * {@code <!-- not compiled: the reason -->}.
 */
class DocumentedJavaSnippetsTests {

	/**
	 * What a reader types without thinking: a snippet needs no import for these.
	 */
	static final List<String> IMPLICIT_IMPORTS = List.of("java.math", "java.time", "java.util", "java.util.concurrent",
			"java.util.function", "reactor.core.publisher", "org.springframework.stereotype",
			"org.springframework.context.annotation", "org.springframework.http", "org.springframework.core",
			"org.springframework.web.bind.annotation", "org.springframework.web.client",
			"org.springframework.transaction.annotation", "org.springframework.transaction.event",
			"org.springframework.scheduling.annotation", "org.springframework.amqp.rabbit.annotation",
			"org.springframework.kafka.annotation");

	private static final Pattern FENCE = Pattern.compile("^\\s*```\\s*([\\w+-]*)\\s*$");

	private static final Pattern NOT_COMPILED = Pattern.compile("^\\s*<!--\\s*not compiled:\\s*(.*?)\\s*-->\\s*$");

	private static final Pattern IMPORT = Pattern.compile("^\\s*import\\s+(static\\s+)?[\\w.*]+\\s*;.*$");

	private static final String PACKAGE = "io.github.idempotent.docs.snippets";

	@TempDir
	Path classes;

	@Test
	void everyJavaBlockOfTheDocsCompiles() throws IOException {
		List<Snippet> snippets = new ArrayList<>();
		List<String> unmarked = new ArrayList<>();
		for (Path document : documents()) {
			snippets.addAll(snippets(document, unmarked));
		}
		assertThat(unmarked).as("blocks with Java in them but no java tag (tag them ```java)").isEmpty();
		assertThat(snippets).as("Java blocks in the docs").hasSizeGreaterThan(15);
		List<Snippet> compiled = snippets.stream().filter((snippet) -> snippet.skipReason() == null).toList();
		List<String> errors = compile(compiled.stream().map(this::source).toList());
		assertThat(errors).as("Java blocks of the docs that do not compile against the starter").isEmpty();
	}

	@Test
	void aBlockThatIsNotCompiledSaysWhy() throws IOException {
		for (Path document : documents()) {
			List<String> lines = Files.readAllLines(document, StandardCharsets.UTF_8);
			for (int i = 0; i < lines.size(); i++) {
				Matcher marker = NOT_COMPILED.matcher(lines.get(i));
				if (marker.matches()) {
					assertThat(marker.group(1)).as(document + ":" + (i + 1) + " gives a reason").isNotBlank();
					assertThat(i + 1 < lines.size() && FENCE.matcher(lines.get(i + 1)).matches())
						.as(document + ":" + (i + 1) + " is followed by the block it excuses")
						.isTrue();
				}
			}
		}
	}

	@Test
	void aSnippetThatDoesNotCompileIsReportedWithItsFileAndLine() throws IOException {
		Path document = this.classes.resolve("broken.md");
		Files.writeString(document, "Text\n\n```java\n@Idempotent(key = \"#request.orderNo\")\nvoid pay() { }\n```\n");
		List<String> errors = compile(snippets(document, new ArrayList<>()).stream().map(this::source).toList());
		assertThat(errors).singleElement().asString().startsWith(document + ":4: ").contains("Idempotent");
	}

	static List<Path> documents() throws IOException {
		Path root = Path.of("..").toAbsolutePath().normalize();
		List<Path> documents = new ArrayList<>();
		try (Stream<Path> readmes = Files.list(root)) {
			readmes.filter((path) -> path.getFileName().toString().matches("README.*\\.md"))
				.sorted()
				.forEach(documents::add);
		}
		try (Stream<Path> docs = Files.list(root.resolve("docs"))) {
			docs.filter((path) -> path.toString().endsWith(".md")).sorted().forEach(documents::add);
		}
		assertThat(documents).as("README.md and docs/*.md, from " + root).hasSizeGreaterThan(5);
		return documents;
	}

	/**
	 * The {@code java} blocks of a document; untagged blocks that hold Java are listed in
	 * {@code unmarked}.
	 */
	private static List<Snippet> snippets(Path document, List<String> unmarked) throws IOException {
		List<String> lines = Files.readAllLines(document, StandardCharsets.UTF_8);
		List<Snippet> snippets = new ArrayList<>();
		for (int i = 0; i < lines.size(); i++) {
			Matcher open = FENCE.matcher(lines.get(i));
			if (!open.matches()) {
				continue;
			}
			String language = open.group(1).toLowerCase(Locale.ROOT);
			int end = i + 1;
			while (end < lines.size() && !lines.get(end).trim().startsWith("```")) {
				end++;
			}
			List<String> body = lines.subList(i + 1, Math.min(end, lines.size()));
			if (language.equals("java")) {
				Matcher marker = (i > 0) ? NOT_COMPILED.matcher(lines.get(i - 1)) : null;
				String skip = (marker != null && marker.matches()) ? marker.group(1) : null;
				snippets.add(new Snippet(document, i + 2, List.copyOf(body), skip));
			}
			else if (language.isEmpty() && body.stream()
				.anyMatch((line) -> IMPORT.matcher(line).matches() || line.trim().startsWith("@Idempotent("))) {
				unmarked.add(document + ":" + (i + 1));
			}
			i = end;
		}
		return snippets;
	}

	/**
	 * The compilation unit of a snippet: its class body, or failing that its method body.
	 */
	private Source source(Snippet snippet) {
		String name = snippet.className();
		Source members = snippet.wrap(name, false);
		return parses(members) ? members : (parses(snippet.wrap(name, true)) ? snippet.wrap(name, true) : members);
	}

	private static boolean parses(Source source) {
		JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
		DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
		JavacTask task = (JavacTask) compiler.getTask(null, null, diagnostics, List.of("-proc:none"), null,
				List.of(source));
		try {
			task.parse();
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
		return diagnostics.getDiagnostics().stream().noneMatch((d) -> d.getKind() == Diagnostic.Kind.ERROR);
	}

	/**
	 * Compiles the sources against the test class path; each error names the document and
	 * line of the snippet.
	 */
	private List<String> compile(List<Source> sources) throws IOException {
		if (sources.isEmpty()) {
			return List.of();
		}
		JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
		DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
		try (StandardJavaFileManager files = compiler.getStandardFileManager(null, null, StandardCharsets.UTF_8)) {
			List<String> options = List.of("-proc:none", "-parameters", "-classpath",
					System.getProperty("java.class.path"), "-d", this.classes.toString(), "--release", "17");
			compiler.getTask(null, files, diagnostics, options, null, sources).call();
		}
		List<String> errors = new ArrayList<>();
		for (Diagnostic<? extends JavaFileObject> diagnostic : diagnostics.getDiagnostics()) {
			if (diagnostic.getKind() == Diagnostic.Kind.ERROR && diagnostic.getSource() instanceof Source source) {
				errors.add(source.where((int) diagnostic.getLineNumber()) + ": "
						+ diagnostic.getMessage(Locale.ROOT).replace('\n', ' '));
			}
		}
		return errors;
	}

	private record Snippet(Path document, int firstLine, List<String> lines, String skipReason) {

		String className() {
			String file = this.document.getFileName().toString().replaceAll("\\W", "_");
			return "Snippet_" + file + "_" + this.firstLine;
		}

		/**
		 * The snippet in a class of its own, as members or, if {@code statements}, as the
		 * body of a method; every line of the source maps back to a line of the document.
		 */
		Source wrap(String className, boolean statements) {
			StringBuilder code = new StringBuilder();
			List<Integer> origin = new ArrayList<>();
			code.append("package ").append(PACKAGE).append(";");
			IMPLICIT_IMPORTS.forEach((name) -> code.append(" import ").append(name).append(".*;"));
			code.append(" import ").append(ReaderTypes.class.getName()).append(".*;");
			code.append('\n');
			origin.add(this.firstLine);
			List<Integer> rest = new ArrayList<>();
			for (int i = 0; i < this.lines.size(); i++) {
				if (IMPORT.matcher(this.lines.get(i)).matches()) {
					code.append(this.lines.get(i)).append('\n');
					origin.add(this.firstLine + i);
				}
				else {
					rest.add(i);
				}
			}
			code.append("@SuppressWarnings(\"all\") class ")
				.append(className)
				.append(" extends ")
				.append(SnippetContext.class.getName())
				.append(" {")
				.append(statements ? " void snippet() throws Exception {" : "")
				.append('\n');
			origin.add(this.firstLine);
			for (int i : rest) {
				code.append(elided(this.lines.get(i))).append('\n');
				origin.add(this.firstLine + i);
			}
			code.append(statements ? "}}" : "}").append('\n');
			origin.add(this.firstLine + this.lines.size() - 1);
			return new Source(className, code.toString(), this.document, origin);
		}

		/**
		 * The code a reader writes where the snippet shows {@code ...}.
		 */
		private static String elided(String line) {
			if (line.trim().equals("...")) {
				return line.replace("...", "throw new UnsupportedOperationException();");
			}
			return line.replace("{ ... }", "{ throw new UnsupportedOperationException(); }");
		}

	}

	private static final class Source extends SimpleJavaFileObject {

		private final String code;

		private final Path document;

		private final List<Integer> origin;

		Source(String className, String code, Path document, List<Integer> origin) {
			super(URI.create("string:///" + PACKAGE.replace('.', '/') + "/" + className + Kind.SOURCE.extension),
					Kind.SOURCE);
			this.code = code;
			this.document = document;
			this.origin = origin;
		}

		@Override
		public CharSequence getCharContent(boolean ignoreEncodingErrors) {
			return this.code;
		}

		String where(int line) {
			int index = Math.max(0, Math.min(line - 1, this.origin.size() - 1));
			return this.document + ":" + this.origin.get(index);
		}

	}

}
