package io.github.idempotent.web;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.codec.multipart.FilePart;
import org.springframework.http.codec.multipart.PartEvent;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestPart;
import org.springframework.web.bind.annotation.RestController;

import io.github.idempotent.annotation.Idempotent;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A multipart request is fingerprinted by its parts as the server parsed them, not by the
 * boundary its client chose for this send: a retry is the same request, another file
 * under the same key is another payload, and the handler still reads its parts.
 */
abstract class AbstractMultipartFingerprintHttpTests {

	private final HttpClient http = HttpClient.newHttpClient();

	@LocalServerPort
	private int port;

	@Autowired
	Receipts receipts;

	String path = "/receipts";

	@Test
	void aRetryUnderAnotherBoundaryReplaysTheFirstAnswer() throws Exception {
		String key = UUID.randomUUID().toString();
		int before = this.receipts.runs.get();
		HttpResponse<String> first = post(key, "boundary-one", "receipt of order 7");
		HttpResponse<String> retry = post(key, "boundary-two", "receipt of order 7");
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(first.body()).isEqualTo("order 7 paid with 18 bytes (receipt of order 7), run " + (before + 1));
		assertThat(retry.statusCode()).isEqualTo(200);
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(this.receipts.runs.get()).isEqualTo(before + 1);
	}

	@Test
	void anotherFileUnderTheSameKeyIsAnotherPayload() throws Exception {
		String key = UUID.randomUUID().toString();
		int before = this.receipts.runs.get();
		HttpResponse<String> first = post(key, "boundary-one", "receipt of order 7");
		HttpResponse<String> other = post(key, "boundary-one", "receipt of order 8");
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(other.statusCode()).isEqualTo(422);
		assertThat(this.receipts.runs.get()).isEqualTo(before + 1);
	}

	@Test
	void aFileKeptOnDiskIsFingerprintedAndStillReadByTheHandler() throws Exception {
		String key = UUID.randomUUID().toString();
		int before = this.receipts.runs.get();
		String large = "receipt of order 7 " + "x".repeat(300 * 1024);
		HttpResponse<String> first = post(key, "boundary-one", large);
		HttpResponse<String> retry = post(key, "boundary-two", large);
		HttpResponse<String> other = post(key, "boundary-one", large + "y");
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(first.body()).startsWith("order 7 paid with " + large.length() + " bytes (receipt of order 7)");
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(other.statusCode()).isEqualTo(422);
		assertThat(this.receipts.runs.get()).isEqualTo(before + 1);
	}

	HttpResponse<String> post(String key, String boundary, String receipt) throws Exception {
		String body = "--" + boundary + "\r\nContent-Disposition: form-data; name=\"orderNo\"\r\n\r\n7\r\n--" + boundary
				+ "\r\nContent-Disposition: form-data; name=\"receipt\"; filename=\"receipt.txt\"\r\n"
				+ "Content-Type: text/plain\r\n\r\n" + receipt + "\r\n--" + boundary + "--\r\n";
		return this.http.send(HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + "/receipts"))
			.header("Content-Type", "multipart/form-data; boundary=" + boundary)
			.header("Idempotency-Key", key)
			.POST(HttpRequest.BodyPublishers.ofString(body))
			.build(), HttpResponse.BodyHandlers.ofString());
	}

	/** Counts its runs; answers with what it read of the receipt. */
	abstract static class Receipts {

		final AtomicInteger runs = new AtomicInteger();

		String paid(String orderNo, String receipt) {
			return "order " + orderNo + " paid with " + receipt.length() + " bytes ("
					+ receipt.substring(0, Math.min(18, receipt.length())) + "), run " + this.runs.incrementAndGet();
		}

	}

	@RestController
	static class ReceiptsController extends Receipts {

		@PostMapping(path = "/receipts", consumes = "multipart/form-data")
		@Idempotent
		String pay(@RequestPart("orderNo") String orderNo, @RequestPart("receipt") String receipt) {
			return paid(orderNo, receipt);
		}

	}

	/** Reads the file's content itself, past the codecs' 256 KB in memory. */
	@RestController
	static class FileReceiptsController extends Receipts {

		@PostMapping(path = "/receipts", consumes = "multipart/form-data")
		@Idempotent
		Mono<String> pay(@RequestPart("orderNo") String orderNo, @RequestPart("receipt") FilePart receipt) {
			return DataBufferUtils.join(receipt.content()).map((content) -> {
				String text = content.toString(StandardCharsets.UTF_8);
				DataBufferUtils.release(content);
				return paid(orderNo, text);
			});
		}

		// Reads the body as sent: its fingerprint is the body's, boundary included.
		@PostMapping(path = "/receipt-events", consumes = "multipart/form-data")
		@Idempotent
		Mono<String> events(@RequestBody Flux<PartEvent> events) {
			return events.filter((event) -> event.name().equals("receipt"))
				.map((event) -> event.content().toString(StandardCharsets.UTF_8))
				.reduce(String::concat)
				.map((receipt) -> paid("7", receipt));
		}

	}

}
