package io.github.idempotent.store;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The record key names its scope, operation and client key unambiguously, and a client
 * cannot choose where Redis Cluster puts its record.
 */
class RecordKeyTests {

	private static final String PAY = "com.shop.checkout.PaymentController#pay(com.shop.checkout.PaymentRequest)";

	@Test
	void aDefaultOperationNameIsShortenedToItsClassAndMethodAndAHash() {
		RecordKey key = RecordKey.of("idempotent", "_", PAY, "k-1", 255);
		assertThat(key.value()).matches("idempotent:_:PaymentController\\.pay~[0-9a-f]{8}:k-1");
		assertThat(key.value().substring(key.value().indexOf('~') + 1, key.value().lastIndexOf(':')))
			.isEqualTo(RecordKey.sha256Hex(PAY).substring(0, 8));
		assertThat(RecordKey.of("idempotent", "_", PAY, "k-1", 255)).isEqualTo(key);
	}

	@Test
	void overloadsAndSameNamedClassesGetDifferentKeys() {
		String overload = "com.shop.checkout.PaymentController#pay(com.shop.checkout.PaymentRequest,boolean)";
		String otherPackage = "com.shop.legacy.PaymentController#pay(com.shop.checkout.PaymentRequest)";
		RecordKey key = RecordKey.of("idempotent", "_", PAY, "k-1", 255);
		assertThat(RecordKey.of("idempotent", "_", overload, "k-1", 255)).isNotEqualTo(key);
		assertThat(RecordKey.of("idempotent", "_", otherPackage, "k-1", 255)).isNotEqualTo(key);
	}

	@Test
	void shortNamesAreKeptAndCannotSpellAShortenedName() {
		assertThat(RecordKey.of("idempotent", "_", "payments.create", "k-1", 255).value())
			.isEqualTo("idempotent:_:payments.create:k-1");
		String shortened = RecordKey.shortName(PAY);
		assertThat(shortened).hasSizeLessThanOrEqualTo(RecordKey.MAX_NAME_LENGTH);
		assertThat(RecordKey.of("idempotent", "_", shortened, "k-1", 255))
			.isNotEqualTo(RecordKey.of("idempotent", "_", PAY, "k-1", 255));
	}

	@Test
	void theReadablePartOfALongNameIsEscapedAndBounded() {
		String name = "com.shop.Very{Long}ControllerNameOfSomething#createTheShipmentForTheOrder(java.lang.String)";
		String value = RecordKey.of("idempotent", "_", name, "k-1", 255).value();
		assertThat(value).doesNotContain("{", "}");
		String shortName = value.substring("idempotent:_:".length(), value.lastIndexOf(':'));
		assertThat(shortName).endsWith(RecordKey.sha256Hex(name).substring(0, 8))
			.contains("createTheShipmentForTheOrder".substring(5));
	}

	@Test
	void aSeparatorInTheNameCannotMakeTwoOperationsShareARecord() {
		assertThat(RecordKey.of("p", "_", "a:b", "c", 512)).isNotEqualTo(RecordKey.of("p", "_", "a", "b:c", 512));
		assertThat(RecordKey.of("p", "x:y", "n", "k", 512)).isNotEqualTo(RecordKey.of("p", "x", "y:n", "k", 512));
		assertThat(RecordKey.of("p", "_", "n", "%3A", 512)).isNotEqualTo(RecordKey.of("p", "_", "n", ":", 512));
	}

	@Test
	void aHashTagInTheClientKeyDoesNotPickTheClusterSlot() {
		// Redis Cluster hashes only what stands between the first { and the next }.
		String value = RecordKey.of("idempotent", "_", "op", "{victim}", 512).value();
		assertThat(value).doesNotContain("{").doesNotContain("}");
		assertThat(RecordKey.of("idempotent", "{t}", "op", "k", 512).value()).doesNotContain("{");
	}

}
