package io.github.idempotent.actuate;

import java.util.Set;

import org.springframework.boot.actuate.endpoint.Show;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Settings of the Actuator endpoint {@code idempotency}.
 *
 * @param showValues When to show stored results: never, when-authorized or always.
 * @param roles Roles allowed to see stored results when show-values is when-authorized;
 * empty for any authenticated user.
 */
@ConfigurationProperties("management.endpoint.idempotency")
public record IdempotencyEndpointProperties(@DefaultValue("never") Show showValues, @DefaultValue Set<String> roles) {

}
