package io.github.idempotent.core;

import java.io.IOException;
import java.util.UUID;
import java.util.function.BiFunction;
import java.util.stream.Stream;

import com.fasterxml.jackson.annotation.JsonIgnoreType;
import com.fasterxml.jackson.annotation.JsonValue;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import tools.jackson.core.JsonGenerator;
import tools.jackson.databind.SerializationContext;
import tools.jackson.databind.ValueSerializer;
import tools.jackson.databind.annotation.JsonSerialize;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.autoconfigure.IdempotentAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The fingerprint of a service call covers what Jackson would leave out of the payload's
 * JSON: a retry under the same key that changes any of it is a reused key (422 over HTTP,
 * dead-lettered from a listener), not a replay of the first call.
 */
class HiddenPayloadFieldsTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class, IdempotentAutoConfiguration.class,
				IdempotentAnnotationAutoConfiguration.class))
		.withPropertyValues("idempotent.store.type=memory", "idempotent.default-scope=global")
		.withUserConfiguration(Config.class);

	static Stream<Arguments> payloads() {
		return Stream.of(
				Arguments.of("a @JsonIgnoreType type",
						(BiFunction<String, String, Object>) (order, card) -> new IgnoredTypeOrder(order,
								new Card(card))),
				Arguments.of("a setter-only property", (BiFunction<String, String, Object>) (order, card) -> {
					SetterOnlyOrder payload = new SetterOnlyOrder();
					payload.setOrderNo(order);
					payload.setCard(card);
					return payload;
				}),
				Arguments.of("a masking @JsonSerialize",
						(BiFunction<String, String, Object>) (order, card) -> new MaskedOrder(order, card)),
				Arguments.of("a @JsonValue that writes less than it holds",
						(BiFunction<String, String, Object>) (order, card) -> new Amount(order, card)));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("payloads")
	void aRetryThatChangesAHiddenFieldIsAReusedKey(String what, BiFunction<String, String, Object> payload) {
		this.runner.run((context) -> {
			Payments payments = context.getBean(Payments.class);
			String key = UUID.randomUUID().toString();
			assertThat(payments.pay(key, payload.apply("A-1", "4111-1111"))).isEqualTo(1);
			assertThat(payments.pay(key, payload.apply("A-1", "4111-1111"))).isEqualTo(1);
			assertThatExceptionOfType(IdempotencyKeyReusedException.class)
				.isThrownBy(() -> payments.pay(key, payload.apply("A-1", "5500-0000")));
		});
	}

	@Configuration(proxyBeanMethods = false)
	static class Config {

		@Bean
		Payments payments() {
			return new Payments();
		}

	}

	static class Payments {

		private int runs;

		@Idempotent(key = "#key", payload = "#payload")
		public int pay(String key, Object payload) {
			return ++this.runs;
		}

	}

	@JsonIgnoreType
	record Card(String number) {
	}

	record IgnoredTypeOrder(String orderNo, Card card) {
	}

	static class SetterOnlyOrder {

		private String orderNo;

		private String card;

		public String getOrderNo() {
			return this.orderNo;
		}

		public void setOrderNo(String orderNo) {
			this.orderNo = orderNo;
		}

		public void setCard(String card) {
			this.card = card;
		}

	}

	record MaskedOrder(String orderNo, @JsonSerialize(using = Masking.class) String card) {
	}

	static class Masking extends ValueSerializer<String> {

		@Override
		public void serialize(String value, JsonGenerator generator, SerializationContext context) {
			generator.writeString("****");
		}

	}

	record Amount(String currency, String value) {

		@JsonValue
		String currencyOnly() {
			return this.currency;
		}

	}

}
