package io.github.idempotent.core;

import java.io.OutputStream;

import org.springframework.core.ResolvableType;

/**
 * Turns a method's return value into bytes and back. Bound once per method to the
 * method's generic return type, so that {@code List<Order>} comes back as a list of
 * orders. Never Java native serialization.
 */
public interface ResultCodec {

	/**
	 * Prepares encoding and decoding for one return type. Called once per method, when
	 * the annotation is parsed; the returned binding is used on every call.
	 */
	Binding bind(ResolvableType returnType);

	/**
	 * Codec for one return type.
	 */
	interface Binding {

		void encode(Object value, OutputStream out);

		Object decode(byte[] bytes, int offset, int length);

	}

}
