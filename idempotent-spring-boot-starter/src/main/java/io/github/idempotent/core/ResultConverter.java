package io.github.idempotent.core;

import org.jspecify.annotations.Nullable;

import org.springframework.core.ResolvableType;

/**
 * Strategy for return types that are not stored as they are, such as an HTTP response
 * entity that is stored as status, headers and body. Registered as beans; the first one
 * that supports a return type wins.
 */
public interface ResultConverter {

	/**
	 * Type that is stored for the given return type, or {@code null} when this converter
	 * does not handle it.
	 */
	@Nullable ResolvableType storedType(ResolvableType returnType);

	Object toStored(Object value);

	Object fromStored(Object stored);

}
