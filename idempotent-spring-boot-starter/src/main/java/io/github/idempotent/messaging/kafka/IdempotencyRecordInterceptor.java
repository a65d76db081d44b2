package io.github.idempotent.messaging.kafka;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.jspecify.annotations.Nullable;

import org.springframework.kafka.listener.RecordInterceptor;

/**
 * Binds the record a listener container hands its listener to the listener's thread, for
 * {@link KafkaRecordKeyResolver}; auto-configured in front of the application's own.
 */
public class IdempotencyRecordInterceptor implements RecordInterceptor<Object, Object> {

	@Override
	public @Nullable ConsumerRecord<Object, Object> intercept(ConsumerRecord<Object, Object> record,
			Consumer<Object, Object> consumer) {
		KafkaRecordKeyResolver.bind(record);
		return record;
	}

	@Override
	public void afterRecord(ConsumerRecord<Object, Object> record, Consumer<Object, Object> consumer) {
		KafkaRecordKeyResolver.unbind();
	}

}
