package io.github.idempotent.web;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;

import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.web.WebFluxTestApplication.Executions;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The HTTP contract on WebFlux, against a Netty server: the cases of
 * {@link AbstractHttpContractTests}, and those whose endpoints only the WebFlux
 * application has (an error listed in cacheFor, an empty result, a storm whose duplicates
 * wait); one subclass per store. After every test, no blocking store call has run on a
 * thread that must not block.
 */
abstract class AbstractWebFluxHttpContractTests extends AbstractHttpContractTests {

	@Autowired
	private Executions executions;

	@Autowired
	private IdempotencyStore store;

	@BeforeEach
	void reset() {
		this.executions.reset();
		WebFluxTestApplication.blockingCallsOnNonBlockingThreads.clear();
	}

	@AfterEach
	void noBlockingStoreCallOnANonBlockingThread() {
		assertThat(WebFluxTestApplication.blockingCallsOnNonBlockingThreads).isEmpty();
	}

	@Override
	protected int runs(String counter) {
		return this.executions.count(counter);
	}

	@Override
	protected String gatedPath() {
		return "/slow-payments";
	}

	@Override
	protected String gatedCounter() {
		return "slow";
	}

	@Override
	protected void closeGate() {
		this.executions.closeGate();
	}

	@Override
	protected void awaitGateEntered() throws InterruptedException {
		for (int i = 0; i < 1000 && this.executions.count("slow-started") == 0; i++) {
			Thread.sleep(10);
		}
		assertThat(this.executions.count("slow-started")).isEqualTo(1);
	}

	@Override
	protected void openGate() {
		this.executions.openGate();
	}

	@Test
	void theCheckRecordsABlockingStoreCallOnANonBlockingThread() {
		RecordKey key = RecordKey.of("blocking-check:", "", "check", UUID.randomUUID().toString(), 512);
		Mono.fromCallable(() -> this.store.claim(key, new Fingerprint("none"), Duration.ofSeconds(5)))
			.subscribeOn(Schedulers.parallel())
			.block(Duration.ofSeconds(10));
		assertThat(WebFluxTestApplication.blockingCallsOnNonBlockingThreads)
			.anySatisfy((call) -> assertThat(call).startsWith("store claim on parallel-"));
		WebFluxTestApplication.blockingCallsOnNonBlockingThreads.clear();
	}

	@Test
	void anErrorListedInCacheForIsReplayed() throws Exception {
		String key = newKey();
		String body = "{\"orderNo\":\"W-7\",\"amount\":5}";
		HttpResponse<String> first = post("/cached-declines", key, body);
		HttpResponse<String> retry = post("/cached-declines", key, body);
		assertThat(first.statusCode()).isEqualTo(402);
		assertThat(retry.statusCode()).isEqualTo(402);
		assertThat(retry.body()).isEqualTo(first.body()).contains("Card declined (1)");
		assertThat(runs("cached")).isEqualTo(1);
	}

	@Test
	void anEmptyResultReplaysAsEmpty() throws Exception {
		String key = newKey();
		String body = "{\"orderNo\":\"W-8\",\"amount\":5}";
		HttpResponse<String> first = post("/empty-payments", key, body);
		HttpResponse<String> replay = post("/empty-payments", key, body);
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(replay.statusCode()).isEqualTo(200);
		assertThat(replay.body()).isEmpty();
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(runs("empty")).isEqualTo(1);
	}

	/**
	 * With {@code waitFor}, every duplicate of a storm waits for the first and gets its
	 * result; {@link HttpContractTests} storms an endpoint that refuses them instead.
	 */
	@Test
	void stormOf64ConcurrentIdenticalRequestsRunsTheMethodOnce() throws Exception {
		String key = newKey();
		String body = "{\"orderNo\":\"W-10\",\"amount\":64}";
		List<CompletableFuture<HttpResponse<String>>> responses = new ArrayList<>();
		for (int i = 0; i < 64; i++) {
			responses.add(sendAsync(request("/storm-payments", key, body)));
		}
		List<String> bodies = new ArrayList<>();
		int replayed = 0;
		for (CompletableFuture<HttpResponse<String>> response : responses) {
			HttpResponse<String> result = response.get(60, TimeUnit.SECONDS);
			assertThat(result.statusCode()).isEqualTo(200);
			bodies.add(result.body());
			if (result.headers().firstValue("Idempotent-Replayed").filter("true"::equals).isPresent()) {
				replayed++;
			}
		}
		assertThat(bodies).hasSize(64).allMatch(bodies.get(0)::equals);
		assertThat(replayed).isEqualTo(63);
		assertThat(runs("storm")).isEqualTo(1);
	}

}
