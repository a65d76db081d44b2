package io.github.idempotent.web;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

import io.github.idempotent.core.IdempotencyTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A handler without {@code @Idempotent} whose guarded operation is an
 * {@link IdempotencyTemplate} call: when that call replays, the response says so with
 * {@code Idempotent-Replayed: true} (the operation did not run again), although the
 * handler built the response anew around the stored value (docs/http.md, "The header").
 */
@SpringBootTest(classes = { WebTestApplication.class, TemplateReplayMarkerHttpTests.TemplateEndpoint.class },
		webEnvironment = WebEnvironment.RANDOM_PORT, properties = "idempotent.store.type=memory")
class TemplateReplayMarkerHttpTests {

	@LocalServerPort
	private int port;

	@Test
	void aTemplateReplayInAPlainHandlerMarksTheResponse() throws Exception {
		String reference = UUID.randomUUID().toString();
		HttpResponse<String> first = post("/template-marker/" + reference);
		HttpResponse<String> second = post("/template-marker/" + reference);
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(second.statusCode()).isEqualTo(200);
		assertThat(second.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		// The stored value, in a response the handler built again: not the first bytes.
		assertThat(first.body()).startsWith("run 1 at call 1");
		assertThat(second.body()).isEqualTo("run 1 at call 2");
	}

	private HttpResponse<String> post(String path) throws Exception {
		return HttpClient.newHttpClient()
			.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
				.POST(HttpRequest.BodyPublishers.noBody())
				.build(), HttpResponse.BodyHandlers.ofString());
	}

	@TestConfiguration(proxyBeanMethods = false)
	@RestController
	static class TemplateEndpoint {

		private final AtomicInteger calls = new AtomicInteger();

		private final AtomicInteger runs = new AtomicInteger();

		@Autowired
		IdempotencyTemplate idempotency;

		@PostMapping("/template-marker/{reference}")
		String handle(@PathVariable String reference) {
			int call = this.calls.incrementAndGet();
			String run = this.idempotency.operation("template-marker")
				.key(reference)
				.execute(String.class, () -> "run " + this.runs.incrementAndGet());
			return run + " at call " + call;
		}

	}

}
