package io.github.idempotent.demo;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.github.idempotent.actuate.IdempotencyEndpoint;
import io.github.idempotent.actuate.IdempotencyEndpoint.InProgressDescriptor;
import io.github.idempotent.demo.CurlSessions.Exchange;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The curl session of docs/http.md ("A curl session") is what the demo answers, started
 * as the doc starts it (a slow card network, duplicates refused at once): the 409 while
 * the first payment runs, the first answer, the replay, the 422 and the 400, each
 * compared with the doc by {@link CurlSessions}.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "demo.payments.gateway-delay=3s", "demo.payments.wait-for=0s",
				"spring.datasource.url=jdbc:h2:mem:documented-http;MODE=PostgreSQL;DATABASE_TO_LOWER=TRUE;"
						+ "DEFAULT_NULL_ORDERING=HIGH;DB_CLOSE_DELAY=-1" })
class DocumentedHttpSessionTests {

	static final Path HTTP_DOC = Path.of("../docs/http.md");

	private static final String SECTION = "## A curl session";

	@LocalServerPort
	int port;

	@Autowired
	IdempotencyEndpoint endpoint;

	@Test
	void theCurlSessionOfTheDocIsWhatTheDemoAnswers() throws IOException {
		List<String> lines = section();
		assertThat(String.join("\n", lines)).as("the demo's start in docs/http.md, as this test starts it")
			.contains("--demo.payments.gateway-delay=3s --demo.payments.wait-for=0s");
		List<Exchange> exchanges = CurlSessions.exchanges(HTTP_DOC, lines);
		assertThat(exchanges).as("curl commands in docs/http.md").hasSizeGreaterThanOrEqualTo(6);
		List<String> differences = new CurlSessions(HTTP_DOC, this.port).run(exchanges,
				// The doc's next command is the duplicate that must find the first one
				// running: wait until it is.
				(curl) -> await().atMost(Duration.ofSeconds(20))
					.until(() -> inProgress(curl.headers().get("Idempotency-Key"))));
		assertThat(differences).as("answers of the demo that docs/http.md does not show as they are").isEmpty();
	}

	@Test
	void theDocSaysWhichHeadersItLeavesOut() throws IOException {
		Matcher sentence = Pattern.compile("\\(([^()]*) headers?(?:\\s+are)?\\s+left\\s+out")
			.matcher(String.join("\n", section()));
		assertThat(sentence.find()).as("docs/http.md says which headers it leaves out").isTrue();
		for (String header : CurlSessions.LEFT_OUT) {
			assertThat(sentence.group(1)).contains("`" + header + "`");
		}
	}

	private boolean inProgress(String key) {
		String cursor = null;
		do {
			InProgressDescriptor page = this.endpoint.inProgress(null, cursor, 1000);
			if (page.records().stream().anyMatch((record) -> key.equals(record.key()))) {
				return true;
			}
			cursor = page.cursor();
		}
		while (cursor != null);
		return false;
	}

	/**
	 * The lines of the section, each at its place in the file (the others blank), so that
	 * failures name the doc's lines.
	 */
	private static List<String> section() throws IOException {
		List<String> lines = Files.readAllLines(HTTP_DOC, StandardCharsets.UTF_8);
		int start = lines.indexOf(SECTION);
		assertThat(start).as("docs/http.md has " + SECTION).isNotNegative();
		int end = start + 1;
		while (end < lines.size() && !lines.get(end).startsWith("## ")) {
			end++;
		}
		List<String> section = new ArrayList<>(lines);
		for (int i = 0; i < section.size(); i++) {
			if (i < start || i >= end) {
				section.set(i, "");
			}
		}
		return section;
	}

}
