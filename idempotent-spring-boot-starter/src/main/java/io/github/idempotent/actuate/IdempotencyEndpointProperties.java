package io.github.idempotent.actuate;

import java.util.HashSet;
import java.util.Set;

import org.springframework.boot.actuate.endpoint.Show;
import org.springframework.boot.context.properties.ConfigurationProperties;

/** Settings of the Actuator endpoint {@code idempotency}. */
@ConfigurationProperties("management.endpoint.idempotency")
public class IdempotencyEndpointProperties {

	/** When to show stored results: never, when-authorized or always. */
	private Show showValues = Show.NEVER;

	/**
	 * Roles allowed to see stored results when show-values is when-authorized; empty for
	 * any authenticated user.
	 */
	private Set<String> roles = new HashSet<>();

	public Show getShowValues() {
		return this.showValues;
	}

	public void setShowValues(Show showValues) {
		this.showValues = showValues;
	}

	public Set<String> getRoles() {
		return this.roles;
	}

	public void setRoles(Set<String> roles) {
		this.roles = roles;
	}

}
