package io.github.idempotent.demo;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.github.idempotent.demo.CurlSessions.Exchange;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * docs/demo.md is what the demo does: its curl sessions are run, in the order a reader
 * runs them, against a demo started from nothing (a database of its own, a Redis key
 * prefix of its own), and every answer is compared with the one the doc shows
 * ({@link CurlSessions}). The start-up log lines it quotes are compared with the demo's,
 * numbers with a fraction (durations) aside; a block that cannot be (the log of a machine
 * without Redis) says why in an HTML comment on the line before its fence:
 * {@code <!-- not compared: the reason -->}.
 */
@ExtendWith(OutputCaptureExtension.class)
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.datasource.url=jdbc:h2:mem:documented-demo;MODE=PostgreSQL;DATABASE_TO_LOWER=TRUE;"
				+ "DEFAULT_NULL_ORDERING=HIGH;DB_CLOSE_DELAY=-1" })
class DocumentedDemoTests {

	static final Path DEMO_DOC = Path.of("../docs/demo.md");

	private static final Pattern NOT_COMPARED = Pattern.compile("^\\s*<!--\\s*not compared:\\s*\\S.*-->\\s*$");

	private static final Pattern FRACTION = Pattern.compile("\\d+\\.\\d+");

	@LocalServerPort
	int port;

	@Test
	void theCurlSessionsOfTheDocAreWhatTheDemoAnswers() throws IOException {
		List<Exchange> exchanges = CurlSessions.exchanges(DEMO_DOC,
				Files.readAllLines(DEMO_DOC, StandardCharsets.UTF_8));
		assertThat(exchanges).as("curl commands in docs/demo.md").hasSizeGreaterThan(15);
		List<String> differences = new CurlSessions(DEMO_DOC, this.port).run(exchanges, (curl) -> {
		});
		assertThat(differences).as("answers of the demo that docs/demo.md does not show as they are").isEmpty();
	}

	@Test
	void theDocSaysWhichHeadersItLeavesOut() throws IOException {
		String doc = Files.readString(DEMO_DOC);
		Matcher sentence = Pattern.compile("\\(([^()]*) headers?\\s+left\\s+out\\)").matcher(doc);
		assertThat(sentence.find()).as("docs/demo.md says which headers it leaves out").isTrue();
		for (String header : CurlSessions.LEFT_OUT) {
			assertThat(sentence.group(1)).contains("`" + header + "`");
		}
	}

	@Test
	void theStartUpLogOfTheDocIsWhatTheDemoLogs(CapturedOutput output) throws IOException {
		List<String> quoted = new ArrayList<>();
		List<String> lines = Files.readAllLines(DEMO_DOC, StandardCharsets.UTF_8);
		boolean fenced = false;
		boolean compared = false;
		for (int i = 0; i < lines.size(); i++) {
			if (CurlSessions.FENCE.matcher(lines.get(i)).matches()) {
				fenced = !fenced;
				compared = fenced && (i == 0 || !NOT_COMPARED.matcher(lines.get(i - 1)).matches());
			}
			else if (fenced && compared && lines.get(i).startsWith("... ") && lines.get(i).contains(" : ")) {
				quoted.add(lines.get(i));
			}
		}
		assertThat(quoted).as("start-up log lines quoted in docs/demo.md").hasSizeGreaterThanOrEqualTo(3);
		List<String> logged = output.getAll().lines().map(DocumentedDemoTests::withoutFractions).toList();
		for (String quotedLine : quoted) {
			String line = quotedLine;
			// Spring Boot names the application after the main class, in a test the
			// test's.
			line = line.replace("DemoApplication", getClass().getSimpleName());
			String logger = line.substring(4, line.indexOf(" : ")).trim();
			String simpleName = logger.substring(logger.lastIndexOf('.') + 1);
			String message = withoutFractions(line.substring(line.indexOf(" : ") + 3));
			assertThat(logged).as("the demo's log has " + line)
				.anyMatch((actual) -> actual.contains(simpleName) && actual.contains(" : " + message));
		}
	}

	private static String withoutFractions(String line) {
		return FRACTION.matcher(line).replaceAll("<n.n>");
	}

}
