package io.github.idempotent.core;

import java.io.OutputStream;
import java.util.Arrays;
import java.util.List;

import tools.jackson.core.StreamWriteFeature;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JavaType;
import tools.jackson.databind.ObjectReader;
import tools.jackson.databind.ObjectWriter;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.type.TypeFactory;

import org.springframework.core.ResolvableType;
import org.springframework.util.Assert;

/**
 * {@link ResultCodec} that writes JSON with the application's {@link JsonMapper}, typed
 * by the method's generic return type, never by a type name stored in the data. Untyped
 * floating-point numbers are read as {@code BigDecimal}, so they replay with their digits
 * and scale.
 */
public class JacksonResultCodec implements ResultCodec {

	private final JsonMapper mapper;

	private final List<ResultConverter> converters;

	public JacksonResultCodec(JsonMapper mapper) {
		this(mapper, List.of());
	}

	public JacksonResultCodec(JsonMapper mapper, List<ResultConverter> converters) {
		Assert.notNull(mapper, "mapper must not be null");
		this.mapper = mapper;
		this.converters = List.copyOf(converters);
	}

	@Override
	public Binding bind(ResolvableType returnType) {
		Class<?> raw = returnType.toClass();
		if (raw == void.class || raw == Void.class) {
			return VoidBinding.INSTANCE;
		}
		for (ResultConverter converter : this.converters) {
			ResolvableType storedType = converter.storedType(returnType);
			if (storedType != null) {
				return new ConvertingBinding(converter, jsonBinding(storedType));
			}
		}
		return jsonBinding(returnType);
	}

	private JsonBinding jsonBinding(ResolvableType type) {
		JavaType javaType = javaType(type);
		// The stored JSON is the codec's own: its BigDecimal notation changes no replay.
		return new JsonBinding(this.mapper.writerFor(javaType).without(StreamWriteFeature.WRITE_BIGDECIMAL_AS_PLAIN),
				this.mapper.readerFor(javaType).with(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS));
	}

	/**
	 * Built from the resolved parts: the raw return type may still be a type variable,
	 * which Jackson would replay as a map.
	 */
	private JavaType javaType(ResolvableType type) {
		TypeFactory types = this.mapper.getTypeFactory();
		if (type.isArray()) {
			return types.constructArrayType(javaType(type.getComponentType()));
		}
		Class<?> raw = type.resolve(Object.class);
		ResolvableType[] generics = type.getGenerics();
		if (generics.length == 0 || generics.length != raw.getTypeParameters().length) {
			return types.constructType(raw);
		}
		return types.constructParametricType(raw, Arrays.stream(generics).map(this::javaType).toArray(JavaType[]::new));
	}

	private record JsonBinding(ObjectWriter writer, ObjectReader reader) implements Binding {

		@Override
		public void encode(Object value, OutputStream out) {
			this.writer.writeValue(out, value);
		}

		@Override
		public Object decode(byte[] bytes, int offset, int length) {
			return this.reader.readValue(bytes, offset, length);
		}

	}

	private record ConvertingBinding(ResultConverter converter, Binding stored) implements Binding {

		@Override
		public void encode(Object value, OutputStream out) {
			this.stored.encode((value != null) ? this.converter.toStored(value) : null, out);
		}

		@Override
		public Object decode(byte[] bytes, int offset, int length) {
			Object stored = this.stored.decode(bytes, offset, length);
			return (stored != null) ? this.converter.fromStored(stored) : null;
		}

	}

	private enum VoidBinding implements Binding {

		INSTANCE;

		@Override
		public void encode(Object value, OutputStream out) {
		}

		@Override
		public Object decode(byte[] bytes, int offset, int length) {
			return null;
		}

	}

}
