package io.github.idempotent.messaging.kafka;

import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;

import io.github.idempotent.core.IdempotencyKeyResolver;

/**
 * Takes the key of a {@code @KafkaListener} call from the record being handled, which
 * {@link IdempotencyRecordInterceptor} binds to the listener's thread: its
 * {@code Idempotency-Key} header (set by the producer, see
 * {@link IdempotencyKeyProducerInterceptor}), else its topic, partition, offset and
 * timestamp ({@code orders-0@42/1764770000000}).
 * <p>
 * The position catches a redelivery of the same record (after a crash before the offset
 * was committed, or a rebalance), but not a message published twice: the second copy is
 * another record at another offset. Only a key the producer sets catches that.
 * <p>
 * The timestamp is there because a position alone does not name one record: a topic
 * deleted and created again numbers its records from offset 0 again, and within the TTL
 * its new records would be taken for replays of the old ones (skipped, or dead-lettered
 * as a reused key). What would name the incarnation, the topic id, is not exposed to
 * consumers by kafka-clients ({@code ConsumerRecord} and {@code Consumer} have none; only
 * the admin client's {@code describeTopics} does, by topic name, which a running consumer
 * cannot tell is stale). A redelivery carries the record's own timestamp, while a record
 * of a new incarnation at the same offset was produced (or appended) later.
 * <p>
 * Offers the record's headers (decoded as UTF-8) to expressions as {@code #headers} and
 * the record as {@code #record}.
 */
public class KafkaRecordKeyResolver implements IdempotencyKeyResolver {

	private static final ThreadLocal<ConsumerRecord<?, ?>> CURRENT = new ThreadLocal<>();

	private final String headerName;

	public KafkaRecordKeyResolver(String headerName) {
		Assert.hasText(headerName, "headerName must not be empty");
		this.headerName = headerName;
	}

	/**
	 * The record the current thread handles, or {@code null} outside a listener.
	 */
	public static @Nullable ConsumerRecord<?, ?> currentRecord() {
		return CURRENT.get();
	}

	static void bind(@Nullable ConsumerRecord<?, ?> record) {
		if (record != null) {
			CURRENT.set(record);
		}
		else {
			CURRENT.remove();
		}
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
		return record.topic() + "-" + record.partition() + "@" + record.offset() + "/" + record.timestamp();
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
		if (record == null) {
			return null;
		}
		if ("record".equals(name)) {
			return record;
		}
		if ("headers".equals(name)) {
			Map<String, String> headers = new HashMap<>();
			for (Header header : record.headers()) {
				headers.put(header.key(),
						(header.value() != null) ? new String(header.value(), StandardCharsets.UTF_8) : null);
			}
			return Collections.unmodifiableMap(headers);
		}
		return null;
	}

	public String getHeaderName() {
		return this.headerName;
	}

}
