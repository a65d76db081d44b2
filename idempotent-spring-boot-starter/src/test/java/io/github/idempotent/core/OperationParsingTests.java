package io.github.idempotent.core;

import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonProperty;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.core.ParameterNameDiscoverer;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.autoconfigure.IdempotentAutoConfiguration;
import io.github.idempotent.store.memory.InMemoryIdempotencyStore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * What start-up refuses, and what the parsed form of a method gets right: return types
 * that would be stored as objects, methods the proxy cannot intercept, generic return
 * types declared on a superclass, payload fields hidden from JSON.
 */
@ExtendWith(OutputCaptureExtension.class)
class OperationParsingTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class, IdempotentAutoConfiguration.class,
				IdempotentAnnotationAutoConfiguration.class))
		.withPropertyValues("idempotent.store.type=memory", "idempotent.default-scope=global");

	@Test
	void futureAndMonoReturnTypesAreAccepted() {
		this.runner.withBean(FutureService.class).withBean(MonoService.class).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(FutureService.class).pay("k1").get()).isEqualTo("paid");
			assertThat(context.getBean(MonoService.class).pay("k2").block()).isEqualTo("paid");
		});
	}

	@Test
	void aMethodReturningAFluxFailsTheStartUpNamingIt() {
		this.runner.withBean(FluxService.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
				.hasMessageContaining(FluxService.class.getName() + "#pay(java.lang.String)")
				.hasMessageContaining("Flux");
		});
	}

	@Test
	void releaseOnStatusOnAMethodThatIsNotAHandlerFailsTheStartUpNamingIt() {
		this.runner.withBean(ReleasingService.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
				.hasMessageContaining(ReleasingService.class.getName() + "#pay(java.lang.String)")
				.hasMessageContaining("releaseOnStatus applies to the response of an HTTP handler method");
		});
	}

	@Test
	void aReleaseOnStatusThatIsNoErrorStatusFailsTheStartUpNamingTheProperty() {
		this.runner.withPropertyValues("idempotent.web.release-on-status=429,2xx")
			.withBean(FutureService.class)
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(context.getStartupFailure()).hasStackTraceContaining(
						"idempotent.web.release-on-status: '2xx' is not a status that can release");
			});
	}

	@Test
	void aFutureOfAStreamFailsTheStartUpNamingIt() {
		this.runner.withBean(FutureOfFluxService.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
				.hasMessageContaining(FutureOfFluxService.class.getName() + "#pay(java.lang.String)");
		});
	}

	@Test
	void aFinalMethodFailsTheStartUpInsteadOfRunningUnprotected() {
		this.runner.withBean(FinalMethodService.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
				.hasMessageContaining(FinalMethodService.class.getName() + "#pay")
				.hasMessageContaining("final");
		});
	}

	@Test
	void aPrivateMethodFailsTheStartUpInsteadOfRunningUnprotected() {
		this.runner.withBean(PrivateMethodService.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
				.hasMessageContaining(PrivateMethodService.class.getName() + "#pay")
				.hasMessageContaining("private");
		});
	}

	@Test
	void aCacheForTypeAReplayCouldNotRecreateFailsTheStartUpNamingIt() {
		this.runner.withBean(UnreplayableCacheForService.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
				.hasMessageContaining(UnreplayableCacheForService.class.getName() + "#pay")
				.hasMessageContaining("cacheFor type " + CauseOnlyException.class.getName()
						+ " needs a constructor taking a String message, or none");
		});
	}

	@Test
	void aGenericReturnTypeDeclaredOnASuperclassReplaysAsItsTypeArgument() {
		this.runner.withBean(OrderService.class).run((context) -> {
			OrderService service = context.getBean(OrderService.class);
			String key = UUID.randomUUID().toString();
			Order first = service.make(key);
			Object replay = service.make(key);
			assertThat(replay).isInstanceOf(Order.class).isEqualTo(first);
			assertThat(service.count()).isEqualTo(1);
		});
	}

	@Test
	void fieldsHiddenFromJsonOutputArePartOfThePayload() {
		this.runner.withBean(CardService.class).run((context) -> {
			CardService service = context.getBean(CardService.class);
			String key = UUID.randomUUID().toString();
			service.charge(key, new CardPayment(100, "4111-1111", "123"));
			assertThatExceptionOfType(IdempotencyKeyReusedException.class)
				.isThrownBy(() -> service.charge(key, new CardPayment(100, "5500-0000", "123")));
			assertThatExceptionOfType(IdempotencyKeyReusedException.class)
				.isThrownBy(() -> service.charge(key, new CardPayment(100, "4111-1111", "999")));
			assertThat(service.charge(key, new CardPayment(100, "4111-1111", "123"))).isEqualTo(1);
			assertThat(service.count()).isEqualTo(1);
		});
	}

	@Test
	void anObserverThatThrowsDoesNotLoseTheResult() {
		this.runner.withBean(OrderService.class)
			.withBean("brokenObserver", IdempotencyObserver.class, BrokenObserver::new)
			.run((context) -> {
				OrderService service = context.getBean(OrderService.class);
				String key = UUID.randomUUID().toString();
				Order first = service.make(key);
				assertThat(service.make(key)).isEqualTo(first);
				assertThat(service.count()).isEqualTo(1);
			});
	}

	@Test
	void headerKeysInAScopeSharedByEveryCallerAreWarnedOfAtStartUp(CapturedOutput output) {
		this.runner.withUserConfiguration(HeaderKeyed.class)
			.withPropertyValues("idempotent.default-scope=global")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(output).contains("take their key from the request header, and every caller shares one scope")
					.contains(HeaderKeyedService.class.getName() + "#pay")
					.contains("docs/guide.md, 'Scope'")
					.doesNotContain("#onPaymentMessage");
			});
	}

	@Test
	void aNamedParameterWithoutCompiledParameterNamesFailsTheStartUpSayingWhatToDo() throws Exception {
		IdempotentOperationSource withoutNames = new IdempotentOperationSource(
				new IdempotencyExecutor(new InMemoryIdempotencyStore(), FailureMode.CLOSED, 1024,
						IdempotencyObserver.NONE),
				() -> new JacksonResultCodec(new JsonMapper()), null, new ParameterNameDiscoverer() {

					@Override
					public String @Nullable [] getParameterNames(Method method) {
						return null;
					}

					@Override
					public String @Nullable [] getParameterNames(Constructor<?> ctor) {
						return null;
					}

				});
		assertThatIllegalStateException()
			.isThrownBy(
					() -> withoutNames.get(NamedKeyService.class.getMethod("pay", String.class), NamedKeyService.class))
			.withMessageContaining("#orderNo")
			.withMessageContaining("-parameters")
			.withMessageContaining("#p0");
		assertThat(
				withoutNames.get(PositionalKeyService.class.getMethod("pay", String.class), PositionalKeyService.class))
			.isNotNull();
	}

	static class NamedKeyService {

		@Idempotent(key = "#orderNo")
		public String pay(String orderNo) {
			return "paid";
		}

	}

	static class PositionalKeyService {

		@Idempotent(key = "#p0 + ':' + #a0")
		public String pay(String orderNo) {
			return "paid";
		}

	}

	static class FutureService {

		@Idempotent(key = "#p0")
		public CompletableFuture<String> pay(String key) {
			return CompletableFuture.completedFuture("paid");
		}

	}

	static class ReleasingService {

		@Idempotent(key = "#p0", releaseOnStatus = "5xx")
		public String pay(String key) {
			return "paid";
		}

	}

	static class FluxService {

		@Idempotent(key = "#p0")
		public Flux<String> pay(String key) {
			return Flux.just("paid");
		}

	}

	static class FutureOfFluxService {

		@Idempotent(key = "#p0")
		public CompletableFuture<Flux<String>> pay(String key) {
			return CompletableFuture.completedFuture(Flux.just("paid"));
		}

	}

	static class MonoService {

		@Idempotent(key = "#p0")
		public Mono<String> pay(String key) {
			return Mono.just("paid");
		}

	}

	static class FinalMethodService {

		@Idempotent(key = "#p0")
		public final String pay(String key) {
			return "paid";
		}

	}

	static class PrivateMethodService {

		public String entry(String key) {
			return pay(key);
		}

		@Idempotent(key = "#p0")
		private String pay(String key) {
			return "paid";
		}

	}

	public record Order(String id, long amount) {
	}

	static class UnreplayableCacheForService {

		@Idempotent(key = "#a0", cacheFor = CauseOnlyException.class)
		public String pay(String key) {
			return "paid";
		}

	}

	/** No constructor a replay could call with the stored message. */
	static class CauseOnlyException extends RuntimeException {

		CauseOnlyException(Throwable cause) {
			super(cause);
		}

	}

	abstract static class Base<T> {

		final AtomicInteger executions = new AtomicInteger();

		public int count() {
			return this.executions.get();
		}

		@Idempotent(key = "#p0")
		public T make(String key) {
			return create(this.executions.incrementAndGet());
		}

		abstract T create(int n);

	}

	static class OrderService extends Base<Order> {

		@Override
		Order create(int n) {
			return new Order("order-" + n, 100L * n);
		}

	}

	public static class CardPayment {

		private final long amount;

		private final String cardNumber;

		private final String cvv;

		CardPayment(long amount, String cardNumber, String cvv) {
			this.amount = amount;
			this.cardNumber = cardNumber;
			this.cvv = cvv;
		}

		public long getAmount() {
			return this.amount;
		}

		@JsonProperty(access = JsonProperty.Access.WRITE_ONLY)
		public String getCardNumber() {
			return this.cardNumber;
		}

		@JsonIgnore
		public String getCvv() {
			return this.cvv;
		}

	}

	static class CardService {

		final AtomicInteger executions = new AtomicInteger();

		public int count() {
			return this.executions.get();
		}

		@Idempotent(key = "#p0")
		public int charge(String key, CardPayment payment) {
			return this.executions.incrementAndGet();
		}

	}

	static class BrokenObserver implements IdempotencyObserver {

		@Override
		public void executed(IdempotencyPolicy policy, String key) {
			throw new IllegalStateException("metrics backend down");
		}

		@Override
		public void replayed(IdempotencyPolicy policy, String key) {
			throw new IllegalStateException("metrics backend down");
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class HeaderKeyed {

		@Bean
		HeaderKeyedService headerKeyedService() {
			return new HeaderKeyedService();
		}

	}

	static class HeaderKeyedService {

		@Idempotent
		public String pay(String request) {
			return "paid";
		}

		/**
		 * A listener: its key comes from the message, and it answers no caller.
		 */
		@Idempotent
		@org.springframework.amqp.rabbit.annotation.RabbitListener(queues = "payments", autoStartup = "false")
		public void onPaymentMessage(String message) {
		}

	}

}
