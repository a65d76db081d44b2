package io.github.idempotent.web;

import java.time.Duration;
import java.util.UUID;

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
 * {@link AbstractHttpContractTests}; one subclass per store. After every test, no
 * blocking store call has run on a thread that must not block.
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

}
