package io.github.idempotent.core;

import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;
import java.io.OutputStream;
import java.security.MessageDigest;
import java.util.Base64;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonProperty;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.MapperFeature;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.cfg.MapperConfig;
import tools.jackson.databind.introspect.Annotated;
import tools.jackson.databind.introspect.AnnotatedMember;
import tools.jackson.databind.introspect.JacksonAnnotationIntrospector;
import tools.jackson.databind.json.JsonMapper;

/**
 * Computes the {@link Fingerprint} of a payload: SHA-256 of its canonical JSON
 * (properties and map entries sorted), so that two equal payloads give the same
 * fingerprint whatever the order of their map entries.
 * <p>
 * The JSON is written with the application's mapper, except that nothing is hidden from
 * it: properties marked {@code @JsonIgnore}, {@code @JsonIgnoreProperties},
 * {@code WRITE_ONLY} (a card number, a password) or in a {@code @JsonView} are part of
 * the payload a key was first used with, so a retry that changes them is refused.
 */
public final class Fingerprinter {

	private static final Base64.Encoder BASE64 = Base64.getUrlEncoder().withoutPadding();

	private final JsonMapper canonicalMapper;

	/**
	 * Cloned per call: a clone copies a few words of state, where
	 * {@link MessageDigest#getInstance} looks the algorithm up among the providers.
	 */
	private final MessageDigest prototype = RecordKey.sha256();

	private final boolean cloneable;

	public Fingerprinter(JsonMapper mapper) {
		this.canonicalMapper = mapper.rebuild()
			.annotationIntrospector(new NothingHidden())
			.enable(MapperFeature.SORT_PROPERTIES_ALPHABETICALLY)
			.enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS)
			.disable(SerializationFeature.FAIL_ON_EMPTY_BEANS)
			.build();
		this.cloneable = isCloneable(this.prototype);
	}

	private static boolean isCloneable(MessageDigest digest) {
		try {
			digest.clone();
			return true;
		}
		catch (CloneNotSupportedException ex) {
			return false;
		}
	}

	private MessageDigest newDigest() {
		if (this.cloneable) {
			try {
				return (MessageDigest) this.prototype.clone();
			}
			catch (CloneNotSupportedException ex) {
				// checked at construction
			}
		}
		return RecordKey.sha256();
	}

	public Fingerprint fingerprint(Object payload) {
		MessageDigest digest = newDigest();
		// The JSON is streamed into the digest: never materialised as a String or array.
		this.canonicalMapper.writeValue(new DigestStream(digest), payload);
		return new Fingerprint(BASE64.encodeToString(digest.digest()));
	}

	/**
	 * Jackson's annotations, less those that keep a property out of the JSON output.
	 */
	private static final class NothingHidden extends JacksonAnnotationIntrospector {

		@Override
		public boolean hasIgnoreMarker(MapperConfig<?> config, AnnotatedMember member) {
			return false;
		}

		@Override
		public JsonIgnoreProperties.Value findPropertyIgnoralByName(MapperConfig<?> config, Annotated annotated) {
			return JsonIgnoreProperties.Value.empty();
		}

		@Override
		public JsonProperty.Access findPropertyAccess(MapperConfig<?> config, Annotated annotated) {
			JsonProperty.Access access = super.findPropertyAccess(config, annotated);
			return (access == JsonProperty.Access.WRITE_ONLY) ? JsonProperty.Access.READ_WRITE : access;
		}

		@Override
		public Class<?> @Nullable [] findViews(MapperConfig<?> config, Annotated annotated) {
			return null;
		}

	}

	private static final class DigestStream extends OutputStream {

		private final MessageDigest digest;

		DigestStream(MessageDigest digest) {
			this.digest = digest;
		}

		@Override
		public void write(int b) {
			this.digest.update((byte) b);
		}

		@Override
		public void write(byte[] b, int off, int len) {
			this.digest.update(b, off, len);
		}

	}

}
