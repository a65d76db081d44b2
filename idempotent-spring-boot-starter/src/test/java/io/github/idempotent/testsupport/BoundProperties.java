package io.github.idempotent.testsupport;

import java.util.Map;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.core.annotation.MergedAnnotations;

/**
 * A {@code @ConfigurationProperties} record bound from the given properties, as an
 * application binds it: what is not given takes the record's defaults.
 */
public final class BoundProperties {

	private BoundProperties() {
	}

	public static <T> T bind(Class<T> type, Map<String, String> properties) {
		String prefix = MergedAnnotations.from(type).get(ConfigurationProperties.class).getString("prefix");
		return new Binder(new MapConfigurationPropertySource(properties)).bindOrCreate(prefix, type);
	}

	public static <T> T defaults(Class<T> type) {
		return bind(type, Map.of());
	}

}
