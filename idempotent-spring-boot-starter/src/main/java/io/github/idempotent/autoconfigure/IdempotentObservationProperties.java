package io.github.idempotent.autoconfigure;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Settings of the Micrometer observation of {@code @Idempotent} calls.
 *
 * @param includeKey Whether spans carry the client's idempotency key ('idempotency.key');
 * a key may be a secret.
 */
@ConfigurationProperties("idempotent.observation")
public record IdempotentObservationProperties(boolean includeKey) {

}
