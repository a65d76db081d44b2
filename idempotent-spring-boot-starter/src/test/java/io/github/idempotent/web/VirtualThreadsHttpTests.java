package io.github.idempotent.web;

import java.lang.reflect.Method;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.http.ResponseEntity;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.core.IdempotencyObserver;
import io.github.idempotent.core.IdempotencyPolicy;
import io.github.idempotent.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Spring MVC on virtual threads ({@code spring.threads.virtual.enabled=true}, Java 21 and
 * later), against the real Redis: a storm of duplicates runs the method once, and
 * duplicates that wait for the first call ({@code waitFor}) park their virtual threads
 * instead of holding a platform thread each.
 * <p>
 * Compiled for Java 17, so the virtual-thread API is reached by reflection; on Java 17
 * the class is skipped (the README's test command runs it on Java 25).
 */
@EnabledForJreRange(min = JRE.JAVA_21)
@SpringBootTest(classes = VirtualThreadsHttpTests.App.class, webEnvironment = WebEnvironment.RANDOM_PORT, properties = {
		"spring.threads.virtual.enabled=true", "idempotent.store.type=redis", "idempotent.local-cache.enabled=false" })
class VirtualThreadsHttpTests {

	private static final int DUPLICATES = 200;

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", TestRedis::host);
		registry.add("spring.data.redis.port", TestRedis::port);
	}

	@LocalServerPort
	private int port;

	@Autowired
	private App app;

	@Test
	void theHandlerRunsOnAVirtualThreadAndADuplicateStormRunsItOnce() throws Exception {
		String key = UUID.randomUUID().toString();
		String body = "{\"orderNo\":\"" + key + "\"}";
		HttpClientSupport http = new HttpClientSupport(this.port);
		List<CompletableFuture<HttpResponse<String>>> responses = new ArrayList<>();
		for (int i = 0; i < 48; i++) {
			responses.add(http.client()
				.sendAsync(http.request("/payments", key, body), HttpResponse.BodyHandlers.ofString()));
		}
		List<String> bodies = new ArrayList<>();
		for (CompletableFuture<HttpResponse<String>> response : responses) {
			HttpResponse<String> answer = response.get(30, TimeUnit.SECONDS);
			assertThat(answer.statusCode()).isIn(201, 409);
			if (answer.statusCode() == 201) {
				bodies.add(answer.body());
			}
		}
		assertThat(this.app.runs(key)).isOne();
		assertThat(bodies).isNotEmpty().allSatisfy((replay) -> assertThat(replay).isEqualTo(bodies.get(0)));
		assertThat(this.app.ranOnVirtualThread(key)).isTrue();
	}

	@Test
	void duplicatesThatWaitParkTheirVirtualThreadsInsteadOfHoldingPlatformThreads() throws Exception {
		String key = UUID.randomUUID().toString();
		String body = "{\"orderNo\":\"" + key + "\"}";
		HttpClientSupport http = new HttpClientSupport(this.port);
		CountDownLatch release = this.app.hold(key);
		List<CompletableFuture<HttpResponse<String>>> responses = new ArrayList<>();
		responses.add(http.client()
			.sendAsync(http.request("/waiting-payments", key, body), HttpResponse.BodyHandlers.ofString()));
		await().atMost(Duration.ofSeconds(20)).until(() -> this.app.runs(key) == 1);
		for (int i = 0; i < DUPLICATES; i++) {
			responses.add(http.client()
				.sendAsync(http.request("/waiting-payments", key, body), HttpResponse.BodyHandlers.ofString()));
		}
		// Every duplicate has claimed the key and found it in progress: each one is in
		// its wait now, between polls of the store.
		await().atMost(Duration.ofSeconds(30)).until(() -> this.app.claims(key) >= DUPLICATES + 1);
		long platformThreadsInTheStarter = platformThreadsRunning("io.github.idempotent.core");
		release.countDown();
		List<String> bodies = new ArrayList<>();
		for (CompletableFuture<HttpResponse<String>> response : responses) {
			HttpResponse<String> answer = response.get(60, TimeUnit.SECONDS);
			assertThat(answer.statusCode()).isEqualTo(201);
			bodies.add(answer.body());
		}
		assertThat(this.app.runs(key)).isOne();
		assertThat(bodies).allSatisfy((replay) -> assertThat(replay).isEqualTo(bodies.get(0)));
		// Thread.getAllStackTraces() sees platform threads only: on virtual threads, no
		// waiting duplicate is among them (a few may be between a poll and its sleep).
		assertThat(platformThreadsInTheStarter).isLessThan(DUPLICATES / 10);
	}

	private static long platformThreadsRunning(String packagePrefix) {
		return Thread.getAllStackTraces()
			.values()
			.stream()
			.filter((stack) -> Arrays.stream(stack).anyMatch((frame) -> frame.getClassName().startsWith(packagePrefix)))
			.count();
	}

	static boolean isVirtual(Thread thread) {
		try {
			Method isVirtual = Thread.class.getMethod("isVirtual");
			return (boolean) isVirtual.invoke(thread);
		}
		catch (ReflectiveOperationException ex) {
			return false;
		}
	}

	record PaymentRequest(String orderNo) {
	}

	record Payment(String orderNo, int run) {
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@RestController
	static class App {

		private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

		private final Map<String, AtomicInteger> claims = new ConcurrentHashMap<>();

		private final Map<String, Boolean> virtual = new ConcurrentHashMap<>();

		private final Map<String, CountDownLatch> holds = new ConcurrentHashMap<>();

		@PostMapping("/payments")
		@Idempotent(key = "#request.orderNo")
		ResponseEntity<Payment> pay(@RequestBody PaymentRequest request) {
			this.virtual.put(request.orderNo(), isVirtual(Thread.currentThread()));
			int run = this.runs.computeIfAbsent(request.orderNo(), (key) -> new AtomicInteger()).incrementAndGet();
			return ResponseEntity.status(201).body(new Payment(request.orderNo(), run));
		}

		@PostMapping("/waiting-payments")
		@Idempotent(key = "#request.orderNo", waitFor = "50s")
		ResponseEntity<Payment> payAfterTheRelease(@RequestBody PaymentRequest request) throws InterruptedException {
			int run = this.runs.computeIfAbsent(request.orderNo(), (key) -> new AtomicInteger()).incrementAndGet();
			CountDownLatch hold = this.holds.get(request.orderNo());
			if (hold != null) {
				hold.await(55, TimeUnit.SECONDS);
			}
			return ResponseEntity.status(201).body(new Payment(request.orderNo(), run));
		}

		@Bean
		SecurityFilterChain securityFilterChain(HttpSecurity http) throws Exception {
			return http.csrf((csrf) -> csrf.disable())
				.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll())
				.build();
		}

		@Bean
		IdempotencyObserver claimCounter() {
			return new IdempotencyObserver() {

				@Override
				public void step(IdempotencyPolicy policy, String key, Step step) {
					if (step == Step.CLAIMED) {
						App.this.claims.computeIfAbsent(key, (k) -> new AtomicInteger()).incrementAndGet();
					}
				}

			};
		}

		CountDownLatch hold(String orderNo) {
			return this.holds.computeIfAbsent(orderNo, (key) -> new CountDownLatch(1));
		}

		int runs(String orderNo) {
			AtomicInteger count = this.runs.get(orderNo);
			return (count != null) ? count.get() : 0;
		}

		int claims(String orderNo) {
			return this.claims.entrySet()
				.stream()
				.filter((entry) -> entry.getKey().endsWith(orderNo))
				.mapToInt((entry) -> entry.getValue().get())
				.sum();
		}

		boolean ranOnVirtualThread(String orderNo) {
			return this.virtual.getOrDefault(orderNo, false);
		}

	}

}
