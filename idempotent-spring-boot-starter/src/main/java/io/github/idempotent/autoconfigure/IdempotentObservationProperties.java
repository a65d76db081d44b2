package io.github.idempotent.autoconfigure;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Settings of the Micrometer observation of {@code @Idempotent} calls.
 */
@ConfigurationProperties("idempotent.observation")
public class IdempotentObservationProperties {

	/**
	 * Whether spans carry the client's idempotency key as the high-cardinality key value
	 * 'idempotency.key'. Off by default: a key may be a secret, since whoever knows it
	 * gets the stored result replayed. Never added to meters.
	 */
	private boolean includeKey;

	public boolean isIncludeKey() {
		return this.includeKey;
	}

	public void setIncludeKey(boolean includeKey) {
		this.includeKey = includeKey;
	}

}
