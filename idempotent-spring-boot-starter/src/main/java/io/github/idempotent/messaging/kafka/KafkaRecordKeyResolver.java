package io.github.idempotent.messaging.kafka;

import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;

import io.github.idempotent.core.IdempotencyKeyResolver;
import io.github.idempotent.store.RecordKey;

/**
 * Takes the key of a {@code @KafkaListener} call from the record being handled: its
 * {@code Idempotency-Key} header, else its topic, partition, offset and timestamp
 * ({@code orders-0@42/1764770000000}). The position catches a redelivery, not a message
 * published twice. The timestamp tells a topic deleted and created again, whose offsets
 * start at 0 again (kafka-clients exposes no topic id to consumers). A derived key too
 * long for {@code idempotent.max-key-length} hashes the topic, then the whole key. Offers
 * the record's headers to expressions as {@code #headers} and the record as
 * {@code #record}.
 */
public class KafkaRecordKeyResolver implements IdempotencyKeyResolver {

	private static final ThreadLocal<ConsumerRecord<?, ?>> CURRENT = new ThreadLocal<>();

	private final String headerName;

	private final int maxKeyLength;

	/** Derived keys are at most 255 characters, the default max-key-length. */
	public KafkaRecordKeyResolver(String headerName) {
		this(headerName, 255);
	}

	/** Derived keys are at most {@code maxKeyLength} characters. */
	public KafkaRecordKeyResolver(String headerName, int maxKeyLength) {
		Assert.hasText(headerName, "headerName must not be empty");
		Assert.isTrue(maxKeyLength > 0, "maxKeyLength must be positive");
		this.headerName = headerName;
		this.maxKeyLength = maxKeyLength;
	}

	/** The record the current thread handles, or {@code null} outside a listener. */
	public static @Nullable ConsumerRecord<?, ?> currentRecord() {
		return CURRENT.get();
	}

	static void bind(ConsumerRecord<?, ?> record) {
		CURRENT.set(record);
	}

	static void unbind() {
		CURRENT.remove();
	}

	@Override
	public @Nullable String resolveKey() {
		ConsumerRecord<?, ?> record = CURRENT.get();
		if (record == null) {
			return null;
		}
		Header header = record.headers().lastHeader(this.headerName);
		if (header != null && header.value() != null && header.value().length > 0) {
			return new String(header.value(), StandardCharsets.UTF_8);
		}
		String position = "-" + record.partition() + "@" + record.offset() + "/" + record.timestamp();
		String key = record.topic() + position;
		if (key.length() <= this.maxKeyLength) {
			return key;
		}
		String hashedTopic = "~" + sha256Hex(record.topic()) + position;
		if (hashedTopic.length() <= this.maxKeyLength) {
			return hashedTopic;
		}
		return "~" + sha256Hex(key).substring(0, Math.min(64, this.maxKeyLength - 1));
	}

	private static String sha256Hex(String text) {
		return HexFormat.of().formatHex(RecordKey.sha256().digest(text.getBytes(StandardCharsets.UTF_8)));
	}

	@Override
	public String describeSource() {
		return "the " + this.headerName + " header of the Kafka record";
	}

	@Override
	public boolean isCallerless() {
		return CURRENT.get() != null;
	}

	@Override
	public boolean appliesToCurrentCall() {
		return CURRENT.get() != null;
	}

	@Override
	public @Nullable Object resolveVariable(String name) {
		ConsumerRecord<?, ?> record = CURRENT.get();
		if (record == null || !"headers".equals(name)) {
			return "record".equals(name) ? record : null;
		}
		Map<String, String> headers = new HashMap<>();
		for (Header header : record.headers()) {
			headers.put(header.key(),
					(header.value() != null) ? new String(header.value(), StandardCharsets.UTF_8) : null);
		}
		return Collections.unmodifiableMap(headers);
	}

	public String getHeaderName() {
		return this.headerName;
	}

}
