package io.github.idempotent.autoconfigure;

import org.springframework.boot.context.properties.ConfigurationProperties;

/** Settings of the Micrometer observation of {@code @Idempotent} calls. */
@ConfigurationProperties("idempotent.observation")
public class IdempotentObservationProperties {

	/**
	 * Whether spans carry the client's idempotency key ('idempotency.key'); a key may be
	 * a secret.
	 */
	private boolean includeKey;

	public boolean isIncludeKey() {
		return this.includeKey;
	}

	public void setIncludeKey(boolean includeKey) {
		this.includeKey = includeKey;
	}

}
