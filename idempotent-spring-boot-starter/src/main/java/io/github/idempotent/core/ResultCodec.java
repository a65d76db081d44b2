package io.github.idempotent.core;

import java.io.OutputStream;

import org.springframework.core.ResolvableType;

/**
 * Turns a method's return value into bytes and back, bound to its generic return type.
 * Never Java native serialization.
 */
public interface ResultCodec {

	/** Prepares encoding and decoding for one return type, once per method. */
	Binding bind(ResolvableType returnType);

	/** Codec for one return type. */
	interface Binding {

		void encode(Object value, OutputStream out);

		Object decode(byte[] bytes, int offset, int length);

	}

}
