package io.github.idempotent.messaging.kafka;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.UUID;

import org.apache.kafka.clients.producer.ProducerInterceptor;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;

/**
 * Kafka producer interceptor that gives a record without an {@code Idempotency-Key}
 * header a random one. Runs once per {@code send}: the producer's retries resend the
 * record as stamped. Registered through {@code interceptor.classes}; the header name is
 * read from {@value #HEADER_NAME_CONFIG}.
 */
public class IdempotencyKeyProducerInterceptor implements ProducerInterceptor<Object, Object> {

	/** Producer property that names the header. */
	public static final String HEADER_NAME_CONFIG = "idempotent.key-header";

	private String headerName = "Idempotency-Key";

	@Override
	public void configure(Map<String, ?> configs) {
		Object name = configs.get(HEADER_NAME_CONFIG);
		if (name != null && !name.toString().isBlank()) {
			this.headerName = name.toString();
		}
	}

	@Override
	public ProducerRecord<Object, Object> onSend(ProducerRecord<Object, Object> record) {
		if (record.headers().lastHeader(this.headerName) == null) {
			record.headers().add(this.headerName, UUID.randomUUID().toString().getBytes(StandardCharsets.UTF_8));
		}
		return record;
	}

	@Override
	public void onAcknowledgement(RecordMetadata metadata, Exception exception) {
	}

	@Override
	public void close() {
	}

}
