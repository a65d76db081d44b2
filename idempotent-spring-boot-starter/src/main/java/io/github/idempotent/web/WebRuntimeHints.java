package io.github.idempotent.web;

import org.jspecify.annotations.Nullable;

import org.springframework.aot.hint.BindingReflectionHintsRegistrar;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;

/**
 * The stored form of a {@code ResponseEntity}, bound by reflection; registered with the
 * web auto-configuration, which alone creates {@link ResponseEntityResultConverter}.
 */
class WebRuntimeHints implements RuntimeHintsRegistrar {

	@Override
	public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
		new BindingReflectionHintsRegistrar().registerReflectionHints(hints.reflection(),
				ResponseEntityResultConverter.StoredResponse.class);
	}

}
