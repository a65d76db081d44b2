package io.github.idempotent.autoconfigure;

import java.time.Duration;

/**
 * {@code @Idempotent} on RabbitMQ and Kafka listeners, under
 * {@code idempotent.messaging}.
 */
public class IdempotentMessagingProperties {

	/** Delay before a message whose duplicate is still being processed is redelivered. */
	private Duration inProgressBackOff = Duration.ofSeconds(1);

	/**
	 * Kafka record header that carries the idempotency key; without it, the record's
	 * position is the key.
	 */
	private String keyHeader = "Idempotency-Key";

	/**
	 * Whether messages sent with RabbitTemplate and KafkaTemplate get a key when they
	 * have none.
	 */
	private boolean stampOutgoing = true;

	public Duration getInProgressBackOff() {
		return this.inProgressBackOff;
	}

	public void setInProgressBackOff(Duration inProgressBackOff) {
		this.inProgressBackOff = inProgressBackOff;
	}

	public String getKeyHeader() {
		return this.keyHeader;
	}

	public void setKeyHeader(String keyHeader) {
		this.keyHeader = keyHeader;
	}

	public boolean isStampOutgoing() {
		return this.stampOutgoing;
	}

	public void setStampOutgoing(boolean stampOutgoing) {
		this.stampOutgoing = stampOutgoing;
	}

}
