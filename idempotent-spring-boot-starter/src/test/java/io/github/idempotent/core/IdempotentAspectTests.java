package io.github.idempotent.core;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.autoconfigure.IdempotentAutoConfiguration;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.StoredResult;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.redis.RedisIdempotencyStore;
import io.github.idempotent.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * {@code @Idempotent} on a plain Spring bean, end to end through the auto-configured
 * interceptor and executor, against the Redis store.
 */
class IdempotentAspectTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class, DataRedisAutoConfiguration.class,
				IdempotentAutoConfiguration.class, IdempotentAnnotationAutoConfiguration.class))
		.withPropertyValues("spring.data.redis.host=" + TestRedis.host(), "spring.data.redis.port=" + TestRedis.port(),
				"idempotent.default-scope=global", "idempotent.store.type=redis", "payments.ttl=1h")
		.withUserConfiguration(PaymentServiceConfiguration.class);

	@Test
	void stormOfDuplicatesRunsTheMethodOnceAndTheRestAreRefusedAsInProgress() {
		this.runner.run((context) -> {
			PaymentService service = context.getBean(PaymentService.class);
			assertThat(context).hasSingleBean(RedisIdempotencyStore.class);
			String orderNo = newKey();
			List<Object> outcomes = storm(64, () -> service.slowPay(new PaymentRequest(orderNo, 250)));
			assertThat(service.count()).isEqualTo(1);
			long inProgress = outcomes.stream().filter(IdempotencyInProgressException.class::isInstance).count();
			List<Object> results = outcomes.stream().filter(Payment.class::isInstance).toList();
			// A duplicate that claims only after the first call completed (a loaded
			// machine starts threads late) gets the replay: the same payment.
			assertThat(results).isNotEmpty().allSatisfy((result) -> assertThat(result).isEqualTo(results.get(0)));
			assertThat(inProgress + results.size()).isEqualTo(64);
			outcomes.stream()
				.filter(IdempotencyInProgressException.class::isInstance)
				.map(IdempotencyInProgressException.class::cast)
				.forEach((ex) -> {
					assertThat(ex.getRetryAfter()).isEqualTo(Duration.ofSeconds(1));
					assertThat(ex.getKey()).isEqualTo(orderNo);
				});
			assertThat(service.slowPay(new PaymentRequest(orderNo, 250))).isEqualTo(results.get(0));
			assertThat(service.count()).isEqualTo(1);
		});
	}

	@Test
	void stormOfDuplicatesThatWaitGetsTheIdenticalResult() {
		this.runner.run((context) -> {
			PaymentService service = context.getBean(PaymentService.class);
			String orderNo = newKey();
			List<Object> outcomes = storm(64, () -> service.slowPayWaiting(new PaymentRequest(orderNo, 250)));
			assertThat(service.count()).isEqualTo(1);
			assertThat(outcomes).hasSize(64).allSatisfy((outcome) -> assertThat(outcome).isInstanceOf(Payment.class));
			assertThat(outcomes).containsOnly(outcomes.get(0));
		});
	}

	@Test
	void anExceptionReleasesTheKeySoARetryRunsAgain() {
		this.runner.run((context) -> {
			PaymentService service = context.getBean(PaymentService.class);
			String key = newKey();
			assertThatExceptionOfType(IllegalStateException.class).isThrownBy(() -> service.failOnce(key));
			assertThat(service.failOnce(key)).isEqualTo("ok after 2 attempts");
			assertThat(service.failOnce(key)).isEqualTo("ok after 2 attempts");
			assertThat(service.count()).isEqualTo(2);
		});
	}

	@Test
	void exceptionsListedInCacheForAreReplayedWithoutRunningAgain() {
		this.runner.run((context) -> {
			PaymentService service = context.getBean(PaymentService.class);
			String key = newKey();
			for (int i = 0; i < 3; i++) {
				assertThatExceptionOfType(InsufficientFundsException.class).isThrownBy(() -> service.declined(key))
					.withMessage("balance 10 is below 250");
			}
			assertThat(service.count()).isEqualTo(1);
		});
	}

	@Test
	void aStoredErrorNamingASubclassOfACacheForTypeIsNeverInstantiated() {
		this.runner.run((context) -> {
			PaymentService service = context.getBean(PaymentService.class);
			IdempotencyStore store = context.getBean(IdempotencyStore.class);
			String key = newKey();
			// A record written by someone else than this application (a shared store, a
			// restored backup): its error names a subclass of the listed type.
			RecordKey storeKey = RecordKey.of("idempotent", IdempotencyScopeResolver.GLOBAL, "declined-exact", key,
					store.maxKeyLength());
			Fingerprint fingerprint = context.getBean(io.github.idempotent.core.IdempotencyExecutor.class)
				.fingerprint(new Object[] { key }, "test", "");
			String token = ((ClaimResult.Acquired) store.claim(storeKey, fingerprint, Duration.ofMinutes(1))).token();
			store.complete(storeKey, token, fingerprint,
					new StoredResult(
							("E" + ForgedFundsException.class.getName() + "\nforged").getBytes(StandardCharsets.UTF_8)),
					Duration.ofMinutes(1));
			int created = ForgedFundsException.created.get();

			assertThatExceptionOfType(IdempotencyResultException.class).isThrownBy(() -> service.declinedExact(key));
			assertThat(ForgedFundsException.created).hasValue(created);
			assertThat(service.count()).isZero();
		});
	}

	@Test
	void aSubclassOfACacheForTypeIsNotStoredAndTheRetryRunsAgain() {
		this.runner.run((context) -> {
			PaymentService service = context.getBean(PaymentService.class);
			String key = newKey();
			for (int i = 0; i < 2; i++) {
				assertThatExceptionOfType(ForgedFundsException.class).isThrownBy(() -> service.declinedBySubclass(key));
			}
			assertThat(service.count()).isEqualTo(2);
		});
	}

	@Test
	void aCrashedOwnersPlaceholderBlocksRetriesOnlyUntilItsLeaseExpires() {
		this.runner.run((context) -> {
			PaymentService service = context.getBean(PaymentService.class);
			IdempotencyStore store = context.getBean(IdempotencyStore.class);
			String key = newKey();
			// What a JVM that died mid-call leaves behind: a placeholder nobody renews.
			RecordKey storeKey = RecordKey.of("idempotent", IdempotencyScopeResolver.GLOBAL, "charge", key,
					store.maxKeyLength());
			Fingerprint fingerprint = context.getBean(io.github.idempotent.core.IdempotencyExecutor.class)
				.fingerprint(new Object[] { key }, "test", "");
			assertThat(store.claim(storeKey, fingerprint, Duration.ofMillis(500)))
				.isInstanceOf(ClaimResult.Acquired.class);
			assertThatExceptionOfType(IdempotencyInProgressException.class).isThrownBy(() -> service.charge(key));
			await().atMost(Duration.ofSeconds(5))
				.pollInterval(Duration.ofMillis(100))
				.ignoreExceptionsInstanceOf(IdempotencyInProgressException.class)
				.until(() -> service.charge(key) == 1);
			assertThat(service.charge(key)).isEqualTo(1);
			assertThat(service.count()).isEqualTo(1);
		});
	}

	@Test
	void aMethodRunningLongerThanItsLeaseIsNeverRunTwice() {
		this.runner.run((context) -> {
			PaymentService service = context.getBean(PaymentService.class);
			String key = newKey();
			ExecutorService pool = Executors.newSingleThreadExecutor();
			try {
				Future<String> first = pool.submit(() -> service.longerThanLease(key));
				// The lease is 300 ms: without renewal the key would be free by now.
				Thread.sleep(900);
				assertThatExceptionOfType(IdempotencyInProgressException.class)
					.isThrownBy(() -> service.longerThanLease(key));
				assertThat(first.get(5, TimeUnit.SECONDS)).isEqualTo("done");
				assertThat(service.longerThanLease(key)).isEqualTo("done");
				assertThat(service.count()).isEqualTo(1);
			}
			finally {
				pool.shutdownNow();
			}
		});
	}

	@Test
	void genericReturnTypesComeBackEqual() {
		this.runner.run((context) -> {
			ReturnTypes types = context.getBean(ReturnTypes.class);
			String key = newKey();
			for (int round = 0; round < 2; round++) {
				assertThat(types.list(key)).isEqualTo(List.of(new Payment("p1", 1), new Payment("p2", 2)));
				assertThat(types.list(key).get(0)).isInstanceOf(Payment.class);
				assertThat(types.map(key)).isEqualTo(Map.of("a", new Payment("p1", 1)));
				assertThat(types.map(key).get("a")).isInstanceOf(Payment.class);
				assertThat(types.optional(key)).contains(new Payment("p3", 3));
				assertThat(types.emptyOptional(key)).isEmpty();
				assertThat(types.primitive(key)).isEqualTo(42L);
				assertThat(types.flag(key)).isTrue();
				assertThat(types.text(key)).isEqualTo("naïve \"text\"");
				assertThat(types.nothing(key)).isNull();
				types.sideEffect(key);
				assertThat(types.nested(key)).isEqualTo(List.of(Optional.of(List.of(new Payment("p4", 4)))));
			}
			assertThat(types.count()).isEqualTo(10);
		});
	}

	@Test
	void positionalParametersAndAnExplicitPayload() {
		this.runner.run((context) -> {
			PaymentService service = context.getBean(PaymentService.class);
			String key = newKey();
			assertThat(service.positional(key, "note-1")).isEqualTo(1);
			// The payload is only the first argument, so a different note is the same
			// request.
			assertThat(service.positional(key, "note-2")).isEqualTo(1);
			assertThat(service.count()).isEqualTo(1);
		});
	}

	@Test
	void sameKeyWithADifferentPayloadIsRefused() {
		this.runner.run((context) -> {
			PaymentService service = context.getBean(PaymentService.class);
			String orderNo = newKey();
			service.pay(orderNo, new PaymentRequest(orderNo, 100));
			assertThatExceptionOfType(IdempotencyKeyReusedException.class)
				.isThrownBy(() -> service.pay(orderNo, new PaymentRequest(orderNo, 999)))
				.withMessageContaining(orderNo);
			assertThat(service.count()).isEqualTo(1);
		});
	}

	@Test
	void aKeyThatEvaluatesToNullOrBlankIsAClearError() {
		this.runner.run((context) -> {
			PaymentService service = context.getBean(PaymentService.class);
			assertThatExceptionOfType(IdempotencyKeyException.class)
				.isThrownBy(() -> service.slowPay(new PaymentRequest(null, 1)))
				.withMessageContaining("#request.orderNo")
				.withMessageContaining("PaymentService#slowPay");
			assertThatExceptionOfType(IdempotencyKeyException.class)
				.isThrownBy(() -> service.slowPay(new PaymentRequest("  ", 1)))
				.withMessageContaining("null or blank");
			assertThat(service.count()).isZero();
		});
	}

	@Test
	void aKeyLongerThanTheLimitIsRefusedAndALongScopedKeyIsHashed() {
		this.runner.withPropertyValues("idempotent.max-key-length=40").run((context) -> {
			PaymentService service = context.getBean(PaymentService.class);
			assertThatExceptionOfType(IdempotencyKeyException.class).isThrownBy(() -> service.charge("k".repeat(41)))
				.withMessageContaining("longer than 40");
			assertThat(service.count()).isZero();
		});
		this.runner.run((context) -> {
			PaymentService service = context.getBean(PaymentService.class);
			String longKey = newKey() + "x".repeat(200);
			String otherLongKey = longKey.substring(0, longKey.length() - 1) + "y";
			assertThat(service.charge(longKey)).isEqualTo(1);
			assertThat(service.charge(longKey)).isEqualTo(1);
			assertThat(service.charge(otherLongKey)).isEqualTo(2);
		});
	}

	private static List<Object> storm(int threads, java.util.concurrent.Callable<Object> call) throws Exception {
		ExecutorService pool = Executors.newFixedThreadPool(threads);
		try {
			CountDownLatch start = new CountDownLatch(1);
			List<Future<Object>> futures = new ArrayList<>();
			for (int i = 0; i < threads; i++) {
				futures.add(pool.submit(() -> {
					start.await();
					return call.call();
				}));
			}
			start.countDown();
			List<Object> outcomes = new ArrayList<>();
			for (Future<Object> future : futures) {
				try {
					outcomes.add(future.get(30, TimeUnit.SECONDS));
				}
				catch (ExecutionException ex) {
					outcomes.add(ex.getCause());
				}
			}
			return outcomes;
		}
		finally {
			pool.shutdownNow();
		}
	}

	private static String newKey() {
		return UUID.randomUUID().toString();
	}

	record PaymentRequest(String orderNo, long amount) {
	}

	record Payment(String id, long amount) {
	}

	static class InsufficientFundsException extends RuntimeException {

		InsufficientFundsException(String message) {
			super(message);
		}

	}

	public static class ForgedFundsException extends InsufficientFundsException {

		static final AtomicInteger created = new AtomicInteger();

		public ForgedFundsException(String message) {
			super(message);
			created.incrementAndGet();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class PaymentServiceConfiguration {

		@Bean
		PaymentService paymentService() {
			return new PaymentService();
		}

		@Bean
		ReturnTypes returnTypes() {
			return new ReturnTypes();
		}

	}

	static class PaymentService {

		private final AtomicInteger executions = new AtomicInteger();

		public int count() {
			return this.executions.get();
		}

		@Idempotent(key = "#request.orderNo", ttl = "${payments.ttl}")
		public Payment slowPay(PaymentRequest request) throws InterruptedException {
			int n = this.executions.incrementAndGet();
			Thread.sleep(300);
			return new Payment("pay-" + n + "-" + UUID.randomUUID(), request.amount());
		}

		@Idempotent(key = "#request.orderNo", waitFor = "10s", name = "slowPay")
		public Payment slowPayWaiting(PaymentRequest request) throws InterruptedException {
			return slowPayBody(request);
		}

		private Payment slowPayBody(PaymentRequest request) throws InterruptedException {
			int n = this.executions.incrementAndGet();
			Thread.sleep(300);
			return new Payment("pay-" + n + "-" + UUID.randomUUID(), request.amount());
		}

		@Idempotent(key = "#orderNo")
		public Payment pay(String orderNo, PaymentRequest request) {
			int n = this.executions.incrementAndGet();
			return new Payment("pay-" + n, request.amount());
		}

		@Idempotent(key = "#p0")
		public String failOnce(String key) {
			int n = this.executions.incrementAndGet();
			if (n == 1) {
				throw new IllegalStateException("downstream timeout");
			}
			return "ok after " + n + " attempts";
		}

		@Idempotent(key = "#a0", cacheFor = InsufficientFundsException.class)
		public String declined(String key) {
			this.executions.incrementAndGet();
			throw new InsufficientFundsException("balance 10 is below 250");
		}

		@Idempotent(key = "#a0", name = "declined-exact", cacheFor = InsufficientFundsException.class)
		public String declinedExact(String key) {
			this.executions.incrementAndGet();
			throw new InsufficientFundsException("balance 10 is below 250");
		}

		@Idempotent(key = "#a0", cacheFor = InsufficientFundsException.class)
		public String declinedBySubclass(String key) {
			this.executions.incrementAndGet();
			throw new ForgedFundsException("card expired");
		}

		@Idempotent(key = "#key", name = "charge", lease = "500ms")
		public int charge(String key) {
			return this.executions.incrementAndGet();
		}

		@Idempotent(key = "#key", lease = "300ms")
		public String longerThanLease(String key) throws InterruptedException {
			this.executions.incrementAndGet();
			Thread.sleep(1500);
			return "done";
		}

		@Idempotent(key = "#p0", payload = "#p0")
		public int positional(String key, String note) {
			return this.executions.incrementAndGet();
		}

	}

	static class ReturnTypes {

		private final AtomicInteger executions = new AtomicInteger();

		public int count() {
			return this.executions.get();
		}

		@Idempotent(key = "#key")
		public List<Payment> list(String key) {
			this.executions.incrementAndGet();
			return List.of(new Payment("p1", 1), new Payment("p2", 2));
		}

		@Idempotent(key = "#key")
		public Map<String, Payment> map(String key) {
			this.executions.incrementAndGet();
			return Map.of("a", new Payment("p1", 1));
		}

		@Idempotent(key = "#key")
		public Optional<Payment> optional(String key) {
			this.executions.incrementAndGet();
			return Optional.of(new Payment("p3", 3));
		}

		@Idempotent(key = "#key")
		public Optional<Payment> emptyOptional(String key) {
			this.executions.incrementAndGet();
			return Optional.empty();
		}

		@Idempotent(key = "#key")
		public long primitive(String key) {
			this.executions.incrementAndGet();
			return 42L;
		}

		@Idempotent(key = "#key")
		public boolean flag(String key) {
			this.executions.incrementAndGet();
			return true;
		}

		@Idempotent(key = "#key")
		public String text(String key) {
			this.executions.incrementAndGet();
			return "naïve \"text\"";
		}

		@Idempotent(key = "#key")
		public Payment nothing(String key) {
			this.executions.incrementAndGet();
			return null;
		}

		@Idempotent(key = "#key")
		public void sideEffect(String key) {
			this.executions.incrementAndGet();
		}

		@Idempotent(key = "#key")
		public List<Optional<List<Payment>>> nested(String key) {
			this.executions.incrementAndGet();
			return List.of(Optional.of(List.of(new Payment("p4", 4))));
		}

	}

}
