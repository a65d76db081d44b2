package io.github.idempotent.aot;

import java.util.List;
import java.util.concurrent.CompletableFuture;

import jakarta.servlet.http.HttpServletRequest;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.annotation.ReflectiveRuntimeHintsRegistrar;
import org.springframework.http.ResponseEntity;

import io.github.idempotent.annotation.Idempotent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.aot.hint.predicate.RuntimeHintsPredicates.reflection;

/**
 * The hints {@code @Idempotent} contributes through {@code @Reflective}, found the way
 * Spring's AOT processing finds them on a bean class.
 */
class IdempotentReflectiveProcessorTests {

	private final RuntimeHints hints = hintsFor(Payments.class);

	private static RuntimeHints hintsFor(Class<?> beanClass) {
		RuntimeHints hints = new RuntimeHints();
		new ReflectiveRuntimeHintsRegistrar().registerRuntimeHints(hints, beanClass);
		return hints;
	}

	@Test
	void theAnnotatedMethodIsInvocableAndItsAnnotationReadable() throws Exception {
		assertThat(reflection()
			.onMethodInvocation(Payments.class.getMethod("pay", PaymentRequest.class, HttpServletRequest.class)))
			.accepts(this.hints);
		assertThat(reflection().onMethodInvocation(Payments.class, "refund")).accepts(this.hints);
	}

	@Test
	void aCacheForExceptionCanBeRecreatedFromItsMessage() throws Exception {
		assertThat(reflection().onConstructorInvocation(Declined.class.getDeclaredConstructor(String.class)))
			.accepts(this.hints);
		assertThat(reflection().onConstructorInvocation(OutOfStock.class.getDeclaredConstructor())).accepts(this.hints);
	}

	@Test
	void theReturnTypeIsBoundForJacksonIncludingNestedTypes() {
		assertThat(reflection().onMethodInvocation(Receipt.class, "id")).accepts(this.hints);
		assertThat(reflection().onMethodInvocation(Amount.class, "cents")).accepts(this.hints);
	}

	@Test
	void theValueInsideResponseEntityFutureAndMonoIsBound() {
		assertThat(reflection().onMethodInvocation(Refund.class, "reason")).accepts(this.hints);
		assertThat(reflection().onMethodInvocation(Shipment.class, "trackingNo")).accepts(this.hints);
		assertThat(reflection().onMethodInvocation(Invoice.class, "number")).accepts(this.hints);
	}

	@Test
	void parameterAccessorsUsedByKeyExpressionsAndTheFingerprintAreInvocable() {
		assertThat(reflection().onMethodInvocation(PaymentRequest.class, "orderNo")).accepts(this.hints);
		assertThat(reflection().onMethodInvocation(Amount.class, "cents")).accepts(this.hints);
	}

	@Test
	void frameworkParametersAndMethodsWithoutTheAnnotationGetNothing() {
		assertThat(reflection().onType(HttpServletRequest.class)).rejects(this.hints);
		assertThat(reflection().onType(Unrelated.class)).rejects(this.hints);
		assertThat(reflection().onMethodInvocation(Payments.class, "lookUp")).rejects(this.hints);
	}

	@Test
	void aClassWithoutIdempotentMethodsGetsNoHints() {
		RuntimeHints hints = hintsFor(Unrelated.class);
		assertThat(hints.reflection().typeHints()).isEmpty();
	}

	public static class Payments {

		@Idempotent(key = "#request.orderNo", cacheFor = { Declined.class, OutOfStock.class })
		public Receipt pay(PaymentRequest request, HttpServletRequest servletRequest) {
			return new Receipt(request.orderNo(), request.amount());
		}

		@Idempotent(key = "#p0")
		public ResponseEntity<Refund> refund(String paymentId) {
			return ResponseEntity.ok(new Refund("duplicate"));
		}

		@Idempotent(key = "#p0")
		public CompletableFuture<List<Shipment>> ship(String orderNo) {
			return CompletableFuture.completedFuture(List.of(new Shipment("T1")));
		}

		@Idempotent(key = "#p0")
		public Mono<Invoice> invoice(String orderNo) {
			return Mono.just(new Invoice("I1"));
		}

		public Unrelated lookUp(String id) {
			return new Unrelated(id);
		}

	}

	public record PaymentRequest(String orderNo, Amount amount) {
	}

	public record Amount(long cents) {
	}

	public record Receipt(String id, Amount amount) {
	}

	public record Refund(String reason) {
	}

	public record Shipment(String trackingNo) {
	}

	public record Invoice(String number) {
	}

	public record Unrelated(String id) {
	}

	public static class Declined extends RuntimeException {

		public Declined(String message) {
			super(message);
		}

	}

	public static class OutOfStock extends RuntimeException {

		public OutOfStock() {
			super("out of stock");
		}

	}

}
