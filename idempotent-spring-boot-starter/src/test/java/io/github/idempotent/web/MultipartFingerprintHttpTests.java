package io.github.idempotent.web;

import java.net.http.HttpResponse;
import java.util.UUID;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.test.context.NestedTestConfiguration;
import org.springframework.test.context.NestedTestConfiguration.EnclosingConfiguration;

import static org.assertj.core.api.Assertions.assertThat;

/** On Spring MVC, and on WebFlux with a handler that reads its file part itself. */
@SpringBootTest(classes = { WebTestApplication.class, AbstractMultipartFingerprintHttpTests.ReceiptsController.class },
		webEnvironment = WebEnvironment.RANDOM_PORT, properties = "idempotent.store.type=memory")
class MultipartFingerprintHttpTests extends AbstractMultipartFingerprintHttpTests {

	@Nested
	@NestedTestConfiguration(EnclosingConfiguration.OVERRIDE)
	@SpringBootTest(classes = { WebFluxTestApplication.class, FileReceiptsController.class },
			webEnvironment = WebEnvironment.RANDOM_PORT,
			properties = { "spring.main.web-application-type=reactive", "idempotent.store.type=memory" })
	class OnWebFlux extends AbstractMultipartFingerprintHttpTests {

		@Test
		void aHandlerThatReadsTheBodyItselfGetsItAndTheSameBytesReplay() throws Exception {
			this.path = "/receipt-events";
			String key = UUID.randomUUID().toString();
			int before = this.receipts.runs.get();
			HttpResponse<String> first = post(key, "boundary-one", "receipt of order 7");
			HttpResponse<String> retry = post(key, "boundary-one", "receipt of order 7");
			assertThat(first.statusCode()).isEqualTo(200);
			assertThat(first.body()).isEqualTo("order 7 paid with 18 bytes (receipt of order 7), run " + (before + 1));
			assertThat(retry.body()).isEqualTo(first.body());
			assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
			assertThat(this.receipts.runs.get()).isEqualTo(before + 1);
		}

	}

}
