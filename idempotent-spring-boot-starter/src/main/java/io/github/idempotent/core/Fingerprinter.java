package io.github.idempotent.core;

import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import com.fasterxml.jackson.annotation.JsonAutoDetect.Visibility;
import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonProperty;
import org.jspecify.annotations.Nullable;
import org.springframework.util.Assert;
import tools.jackson.databind.MapperFeature;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.cfg.MapperConfig;
import tools.jackson.databind.introspect.Annotated;
import tools.jackson.databind.introspect.AnnotatedClass;
import tools.jackson.databind.introspect.AnnotatedMember;
import tools.jackson.databind.introspect.VisibilityChecker;
import tools.jackson.databind.introspect.JacksonAnnotationIntrospector;
import tools.jackson.databind.json.JsonMapper;

/**
 * The {@link Fingerprint} of a payload: SHA-256, or HMAC-SHA256 under a secret, of its
 * canonical JSON (sorted), from which nothing is hidden ({@code @JsonIgnore},
 * {@code @JsonView}, custom serializers...), so a retry that changes any of it is
 * refused. A secret keeps low-entropy values from being guessed offline from a record.
 */
final class Fingerprinter {

	private final JsonMapper canonicalMapper;

	/** Cloned per call: cheaper than {@link MessageDigest#getInstance}. */
	private final MessageDigest digest = RecordKey.sha256();

	/** Cloned per call, as the digest. */
	private final @Nullable Mac mac;

	private final @Nullable SecretKeySpec macKey;

	Fingerprinter(JsonMapper mapper, @Nullable String secret) {
		this.canonicalMapper = mapper.rebuild()
			.annotationIntrospector(new NothingHidden())
			.enable(MapperFeature.SORT_PROPERTIES_ALPHABETICALLY)
			.enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS)
			.disable(SerializationFeature.FAIL_ON_EMPTY_BEANS)
			.build();
		Assert.isTrue(secret == null || !secret.isBlank(),
				"secret must not be empty: set idempotent.fingerprint-secret, or leave it unset");
		this.macKey = (secret != null) ? new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256")
				: null;
		this.mac = (this.macKey != null) ? newMac(this.macKey) : null;
	}

	private static Mac newMac(SecretKeySpec key) {
		try {
			Mac mac = Mac.getInstance("HmacSHA256");
			mac.init(key);
			return mac;
		}
		catch (GeneralSecurityException ex) {
			throw new IllegalStateException("HmacSHA256 is required by every Java platform", ex);
		}
	}

	Fingerprint fingerprint(@Nullable Object payload) {
		IdempotencyExecutor.FingerprintStream out = stream();
		this.canonicalMapper.writeValue(out, payload);
		return out.fingerprint();
	}

	IdempotencyExecutor.FingerprintStream stream() {
		if (this.mac != null && this.macKey != null) {
			Mac mac = copy(this.mac, this.macKey);
			return new IdempotencyExecutor.FingerprintStream(mac::update, mac::doFinal);
		}
		MessageDigest digest = copy(this.digest);
		return new IdempotencyExecutor.FingerprintStream(digest::update, digest::digest);
	}

	// A provider that cannot clone (some FIPS ones) costs a new instance per call.
	private static MessageDigest copy(MessageDigest prototype) {
		try {
			return (MessageDigest) prototype.clone();
		}
		catch (CloneNotSupportedException ex) {
			return RecordKey.sha256();
		}
	}

	private static Mac copy(Mac prototype, SecretKeySpec key) {
		try {
			return (Mac) prototype.clone();
		}
		catch (CloneNotSupportedException ex) {
			return newMac(key);
		}
	}

	/** Jackson's annotations, less those that keep a property out of the JSON output. */
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

		@Override
		public @Nullable Boolean isIgnorableType(MapperConfig<?> config, AnnotatedClass annotated) {
			return null;
		}

		@Override
		public @Nullable Object findSerializer(MapperConfig<?> config, Annotated annotated) {
			return null;
		}

		@Override
		public @Nullable Object findContentSerializer(MapperConfig<?> config, Annotated annotated) {
			return null;
		}

		@Override
		public @Nullable Boolean hasAsValue(MapperConfig<?> config, Annotated annotated) {
			return null;
		}

		/** A property with a setter and no getter is data the client sent. */
		@Override
		public VisibilityChecker findAutoDetectVisibility(MapperConfig<?> config, AnnotatedClass annotated,
				VisibilityChecker checker) {
			return super.findAutoDetectVisibility(config, annotated, checker).withFieldVisibility(Visibility.ANY);
		}

	}

}
