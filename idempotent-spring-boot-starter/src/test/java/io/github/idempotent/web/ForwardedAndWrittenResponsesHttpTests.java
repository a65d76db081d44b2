package io.github.idempotent.web;

import java.io.IOException;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.UUID;

import jakarta.servlet.http.HttpServletResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.stereotype.Controller;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.ResponseBody;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.web.WebTestApplication.Executions;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Responses the servlet container sends in its own time. A guarded handler that writes
 * with {@code getWriter()} and leaves the writer unflushed: the replay is the body its
 * first caller got, not an empty one. A guarded handler forwards (a {@code forward:}
 * view, as a JSP view does): the servlet container sends and closes the response when the
 * forward returns, so the first caller gets what the forwarded handler wrote, and a retry
 * gets it replayed. When the forwarded handler is guarded too, both keys end with that
 * response: neither stays in progress until its maxDuration.
 */
@SpringBootTest(classes = { WebTestApplication.class, ForwardedAndWrittenResponsesHttpTests.Forwarding.class },
		webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "idempotent.store.type=memory", "idempotent.max-result-size=8KB" })
class ForwardedAndWrittenResponsesHttpTests {

	@LocalServerPort
	private int port;

	@Autowired
	private Executions executions;

	@ParameterizedTest
	@ValueSource(strings = { "guarded", "unguarded", "writer" })
	void aForwardedCallAnswersItsResponseAndReplaysIt(String target) throws Exception {
		this.executions.reset();
		HttpClientSupport http = new HttpClientSupport(this.port);
		String key = "fwd-" + UUID.randomUUID();
		String body = "{\"orderNo\":\"" + key + "\",\"amount\":1}";
		HttpResponse<String> first = http.post("/forwarding/" + target, key, body);
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(first.body()).contains("\"run\":1");
		assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
		HttpResponse<String> retry = http.post("/forwarding/" + target, key, body);
		assertThat(retry.statusCode()).isEqualTo(200);
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(this.executions.count("forwarding")).isEqualTo(1);
		assertThat(this.executions.count(target)).isEqualTo(1);
	}

	@Test
	void aReplayReachedThroughAForwardIsSent() throws Exception {
		this.executions.reset();
		HttpClientSupport http = new HttpClientSupport(this.port);
		String key = "fwd-" + UUID.randomUUID();
		String body = "{\"orderNo\":\"" + key + "\",\"amount\":1}";
		HttpResponse<String> direct = http.post("/forwarded/guarded", key, body);
		assertThat(direct.body()).contains("\"run\":1");
		HttpResponse<String> forwarded = http.post("/forwarding/guarded", key, body);
		assertThat(forwarded.statusCode()).isEqualTo(200);
		assertThat(forwarded.body()).isEqualTo(direct.body());
		assertThat(forwarded.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(http.post("/forwarding/guarded", key, body).body()).isEqualTo(direct.body());
		assertThat(this.executions.count("guarded")).isEqualTo(1);
	}

	@Test
	void anUnguardedHandlerForwardingToAGuardedOneAnswersItsResponse() throws Exception {
		this.executions.reset();
		HttpClientSupport http = new HttpClientSupport(this.port);
		String key = "fwd-" + UUID.randomUUID();
		HttpResponse<String> first = http.post("/unguarded-forwarding", key, "{}");
		assertThat(first.body()).contains("\"run\":1");
		HttpResponse<String> retry = http.post("/unguarded-forwarding", key, "{}");
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(this.executions.count("guarded")).isEqualTo(1);
	}

	@Test
	void aForwardedResponseLargerThanARecordIsSentWhole() throws Exception {
		this.executions.reset();
		HttpClientSupport http = new HttpClientSupport(this.port);
		String key = "fwd-" + UUID.randomUUID();
		HttpResponse<String> first = http.post("/forwarding/large", key, "{}");
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(first.body()).hasSize(20_000);
		HttpResponse<String> retry = http.post("/forwarding/large", key, "{}");
		assertThat(retry.body()).contains("result-unavailable");
		assertThat(this.executions.count("large")).isEqualTo(1);
	}

	@Test
	void anUnflushedWritersBodyIsReplayed() throws Exception {
		this.executions.reset();
		HttpClientSupport http = new HttpClientSupport(this.port);
		String key = "w-" + UUID.randomUUID();
		HttpResponse<String> first = http.post("/direct-writer", key, "{}");
		assertThat(first.body()).contains("\"run\":1");
		HttpResponse<String> retry = http.post("/direct-writer", key, "{}");
		assertThat(retry.body()).isEqualTo(first.body());
	}

	@TestConfiguration(proxyBeanMethods = false)
	@Controller
	static class Forwarding {

		private final Executions executions;

		Forwarding(Executions executions) {
			this.executions = executions;
		}

		@Idempotent
		@PostMapping("/forwarding/{target}")
		String forwarding(@PathVariable String target, @RequestBody Map<String, Object> order) {
			this.executions.increment("forwarding");
			return "forward:/forwarded/" + target;
		}

		@Idempotent
		@PostMapping("/forwarded/guarded")
		@ResponseBody
		Map<String, Object> guarded() {
			return Map.of("run", this.executions.increment("guarded"), "id", UUID.randomUUID().toString());
		}

		@PostMapping("/forwarded/unguarded")
		@ResponseBody
		Map<String, Object> unguarded() {
			return Map.of("run", this.executions.increment("unguarded"), "id", UUID.randomUUID().toString());
		}

		@PostMapping("/unguarded-forwarding")
		String unguardedForwarding() {
			return "forward:/forwarded/guarded";
		}

		@PostMapping("/forwarded/large")
		void large(HttpServletResponse response) throws IOException {
			this.executions.increment("large");
			response.setContentType("text/plain");
			response.getWriter().print("x".repeat(20_000));
		}

		@Idempotent
		@PostMapping("/direct-writer")
		void directWriter(HttpServletResponse response) throws IOException {
			writer(response);
		}

		@PostMapping("/forwarded/writer")
		void writer(HttpServletResponse response) throws IOException {
			response.setContentType("application/json");
			response.getWriter()
				.print("{\"run\":" + this.executions.increment("writer") + ",\"id\":\"" + UUID.randomUUID() + "\"}");
		}

	}

}
