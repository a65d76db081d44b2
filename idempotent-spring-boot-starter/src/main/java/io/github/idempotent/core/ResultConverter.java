package io.github.idempotent.core;

import org.jspecify.annotations.Nullable;

import org.springframework.core.ResolvableType;

/**
 * Stores a return type other than as it is, such as a response entity. Registered as
 * beans; the first that supports a return type wins.
 */
public interface ResultConverter {

	/** Type stored for {@code returnType}, or {@code null} when not handled. */
	@Nullable ResolvableType storedType(ResolvableType returnType);

	Object toStored(Object value);

	Object fromStored(Object stored);

}
