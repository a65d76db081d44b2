package io.github.idempotent.test.mvc;

import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.webmvc.test.autoconfigure.WebMvcTest;
import org.springframework.http.MediaType;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.MvcResult;
import org.springframework.test.web.servlet.request.MockHttpServletRequestBuilder;
import org.springframework.test.web.servlet.client.RestTestClient;

import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.memory.InMemoryIdempotencyStore;
import io.github.idempotent.test.DuplicateResponses;
import io.github.idempotent.test.IdempotencyTester;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * A user's controller test: a {@code @WebMvcTest} slice sees the 409, the 422 and the
 * replay of the starter, on the in-memory store although the application names Redis.
 */
@WebMvcTest(controllers = PaymentController.class, properties = "idempotent.store.type=redis")
class PaymentControllerTests {

	@Autowired
	MockMvc mvc;

	@Autowired
	IdempotencyTester idempotency;

	@Autowired
	PaymentController controller;

	@Autowired
	IdempotencyStore store;

	@Test
	void concurrentDuplicatesRunOnceAndReplayTheFirstResponse() {
		int debitsBefore = this.controller.debits();
		DuplicateResponses responses = this.idempotency.request(this.mvc, payment("/api/payments", "A-1"))
			.sentConcurrently(8)
			.assertRanOnce()
			.assertReplaysIdentical();
		assertThat(this.controller.debits() - debitsBefore).isOne();
		assertThat(responses.first().status()).isEqualTo(201);
		assertThat(responses.first().headers().getFirst("Location")).startsWith("/api/payments/");
	}

	@Test
	void aReusedKeyGets422() {
		this.idempotency.request(this.mvc, payment("/api/payments", "A-2"))
			.keyReusedBy(payment("/api/payments", "B-2"))
			.assertRejected();
	}

	@Test
	void aDuplicateWhileTheFirstRunsGets409WithRetryAfter() throws Exception {
		String key = UUID.randomUUID().toString();
		CompletableFuture<MvcResult> first = CompletableFuture
			.supplyAsync(() -> perform(payment("/api/slow-payments", "A-3").header("Idempotency-Key", key)));
		assertThat(this.controller.awaitSlowPaymentStarted()).isTrue();
		this.mvc.perform(payment("/api/slow-payments", "A-3").header("Idempotency-Key", key))
			.andExpect(status().isConflict())
			.andExpect(header().exists("Retry-After"));
		this.controller.finishSlowPayment();
		assertThat(first.get(30, TimeUnit.SECONDS).getResponse().getStatus()).isEqualTo(201);
	}

	@Test
	void duplicatesThroughRestTestClientRunOnce() {
		RestTestClient client = RestTestClient.bindTo(this.mvc).build();
		this.idempotency
			.request(client,
					(c) -> c.post()
						.uri("/api/payments")
						.contentType(MediaType.APPLICATION_JSON)
						.body("{\"orderNo\":\"A-4\",\"amount\":12.50}"))
			.sentConcurrently(4)
			.assertRanOnce()
			.assertReplaysIdentical();
	}

	@Test
	void theKitFailsAnEndpointThatRunsEveryDuplicate() {
		assertThatExceptionOfType(AssertionError.class)
			.isThrownBy(() -> this.idempotency.request(this.mvc, payment("/api/unguarded-payments", "A-5"))
				.sentConcurrently(3)
				.assertRanOnce())
			.withMessageContaining("none of them");
	}

	@Test
	void theSliceKeepsRecordsInMemory() {
		assertThat(this.store).isInstanceOf(InMemoryIdempotencyStore.class);
	}

	private MvcResult perform(MockHttpServletRequestBuilder request) {
		try {
			return this.mvc.perform(request).andReturn();
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static MockHttpServletRequestBuilder payment(String path, String orderNo) {
		return post(path).contentType(MediaType.APPLICATION_JSON)
			.content("{\"orderNo\":\"" + orderNo + "\",\"amount\":12.50}");
	}

}
