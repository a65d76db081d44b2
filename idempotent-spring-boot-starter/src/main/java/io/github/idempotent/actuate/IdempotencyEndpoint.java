package io.github.idempotent.actuate;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.fasterxml.jackson.annotation.JsonInclude;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.Show;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.Selector.Match;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.util.Assert;
import org.springframework.util.MimeType;
import org.springframework.util.MimeTypeUtils;
import org.springframework.util.StringUtils;

import io.github.idempotent.core.RecordedResponse;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.IdempotencyRecord;
import io.github.idempotent.store.InspectableIdempotencyStore;
import io.github.idempotent.store.InspectableIdempotencyStore.Deletion;
import io.github.idempotent.store.InspectableIdempotencyStore.InProgressPage;

/**
 * Actuator endpoint {@code idempotency}, for operators: the records still in progress,
 * one record, and its deletion (a write operation). The operation is named as in
 * {@code @Idempotent(name = ...)}, by its default name, or as a record key shows it.
 * Stored results are shown only as {@code show-values} allows. See docs/operations.md.
 */
@Endpoint(id = "idempotency", defaultAccess = Access.READ_ONLY)
public class IdempotencyEndpoint {

	/** Records examined by one page of the in-progress listing when none is asked for. */
	static final int DEFAULT_LIMIT = 100;

	static final int MAX_LIMIT = 1000;

	/** Largest stored result the endpoint decompresses to show. */
	private static final long MAX_SHOWN_SIZE = 16 * 1024 * 1024;

	// SimpleClass and method of a default name pkg.SimpleClass#method(types), which
	// SimpleClass.method and SimpleClass#method abbreviate.
	private static final Pattern DEFAULT_NAME = Pattern.compile("(?:[^#]*\\.)?([^.#]*)#([^(]*)\\(.*", Pattern.DOTALL);

	private static final Log logger = LogFactory.getLog(IdempotencyEndpoint.class);

	private final InspectableIdempotencyStore store;

	private final String keyPrefix;

	private final Show showValues;

	private final Set<String> roles;

	private final Runnable deletionCounter;

	private final Supplier<Set<String>> operationNames;

	/**
	 * @param operationNames names of the application's {@code @Idempotent} operations
	 * @param roles roles that may see stored results under {@link Show#WHEN_AUTHORIZED}
	 * (empty: any authenticated user)
	 */
	public IdempotencyEndpoint(InspectableIdempotencyStore store, Supplier<Set<String>> operationNames,
			String keyPrefix, Show showValues, Set<String> roles, Runnable deletionCounter) {
		Assert.notNull(store, "store must not be null");
		Assert.hasText(keyPrefix, "keyPrefix must not be empty");
		this.store = store;
		this.keyPrefix = keyPrefix;
		this.showValues = showValues;
		this.roles = Set.copyOf(roles);
		this.deletionCounter = deletionCounter;
		this.operationNames = operationNames;
	}

	/** The records in progress for at least {@code olderThan} (default: all). */
	@ReadOperation
	public InProgressDescriptor inProgress(@Nullable String olderThan, @Nullable String cursor,
			@Nullable Integer limit) {
		Duration minimumAge;
		try {
			minimumAge = StringUtils.hasText(olderThan) ? DurationStyle.detectAndParse(olderThan.trim())
					: Duration.ZERO;
		}
		catch (IllegalArgumentException ex) {
			minimumAge = null;
		}
		if (minimumAge == null || minimumAge.isNegative()) {
			throw new InvalidEndpointRequestException("Invalid olderThan '" + olderThan + "'",
					"olderThan must be a duration such as 30s, 5m or PT30S");
		}
		int pageSize = (limit != null) ? limit : DEFAULT_LIMIT;
		if (pageSize < 1 || pageSize > MAX_LIMIT) {
			String reason = "limit must be between 1 and " + MAX_LIMIT;
			throw new InvalidEndpointRequestException(reason, reason);
		}
		InProgressPage page = this.store.findInProgress(this.keyPrefix, minimumAge,
				StringUtils.hasText(cursor) ? cursor : null, pageSize);
		Instant now = Instant.now();
		return new InProgressDescriptor(minimumAge.toString(),
				page.records().stream().map((record) -> describe(record, now, false)).toList(), page.cursor());
	}

	/**
	 * The record of {@code key} for {@code operation}, in {@code scope} (default
	 * {@code _}); {@code null}, answered 404, when there is none.
	 */
	@ReadOperation
	public @Nullable RecordDescriptor record(@Selector(match = Match.ALL_REMAINING) String[] path,
			@Nullable String scope, SecurityContext securityContext) {
		boolean showResult = this.showValues.isShown(securityContext, this.roles);
		return this.store.inspect(recordKey(path, scope))
			.map((found) -> describe(found, Instant.now(), showResult))
			.orElse(null);
	}

	/**
	 * Deletes the record of {@code key} for {@code operation}: without {@code force}
	 * unless a call holds its lease, with {@code force=true} only while still in
	 * progress. The store decides in the same atomic step as the deletion.
	 */
	@DeleteOperation
	public Map<String, Object> delete(@Selector(match = Match.ALL_REMAINING) String[] path, @Nullable String scope,
			@Nullable Boolean force, SecurityContext securityContext) {
		RecordKey recordKey = recordKey(path, scope);
		boolean forced = Boolean.TRUE.equals(force);
		Optional<IdempotencyRecord> seen = this.store.inspect(recordKey);
		Deletion deletion = forced ? this.store.deleteInProgress(recordKey) : this.store.deleteUnlessHeld(recordKey);
		Principal principal = (securityContext != null) ? securityContext.getPrincipal() : null;
		String who = (principal != null) ? "'" + principal.getName() + "'" : "An unauthenticated caller";
		String asked = who + " asked to delete idempotency record " + recordKey;
		Map<String, Object> body = new LinkedHashMap<>();
		body.put("storedKey", recordKey.value());
		body.put("deleted", deletion == Deletion.DELETED);
		switch (deletion) {
			case HELD -> {
				body.put("state", IdempotencyRecord.State.IN_PROGRESS.name());
				seen.filter((record) -> record.state() == IdempotencyRecord.State.IN_PROGRESS)
					.map(IdempotencyRecord::expiresIn)
					.ifPresent((lease) -> body.put("leaseRemaining", lease.toString()));
				body.put("reason", "The call is in progress and its owner still holds the lease: deleting the "
						+ "record lets a retry run alongside it. Delete with force=true once the owner is known to "
						+ "be gone or hung for good");
				logger.info(asked + " through the actuator; refused without force=true, the call is in progress");
			}
			case COMPLETED -> {
				body.put("state", IdempotencyRecord.State.COMPLETED.name());
				body.put("reason", "The record holds a result, which force=true keeps (the call may have "
						+ "completed meanwhile). Delete without force to delete a result");
				logger.info(asked + " with force=true through the actuator; kept, it holds a result");
			}
			case NONE -> logger.info(asked + " through the actuator; there was none");
			case DELETED -> {
				String state = forced ? IdempotencyRecord.State.IN_PROGRESS.name()
						: seen.map((record) -> record.state().name()).orElse("EXPIRED");
				body.put("state", state);
				this.deletionCounter.run();
				logger.warn(
						who + " deleted idempotency record " + recordKey + " (" + state + (forced ? ", force=true" : "")
								+ ") through the actuator; the next call with this key runs the method");
			}
		}
		return body;
	}

	// The first segment is the operation, the rest the key. One selector, not two:
	// WebFlux hands a remaining-segments selector that follows another the whole path.
	private RecordKey recordKey(String[] path, @Nullable String scope) {
		if (path.length < 2) {
			throw new InvalidEndpointRequestException("Missing key in /" + String.join("/", path),
					"name a record as /{operation}/{key}");
		}
		return RecordKey.of(this.keyPrefix, StringUtils.hasText(scope) ? scope : "_", resolveOperation(path[0]),
				String.join("/", Arrays.copyOfRange(path, 1, path.length)), this.store.maxKeyLength());
	}

	// A known name as it is; else the known name whose record-key form it is; else the
	// one known default name it abbreviates; else the name as given.
	private String resolveOperation(String operation) {
		Set<String> known = this.operationNames.get();
		if (known.contains(operation)) {
			return operation;
		}
		List<String> matches = known.stream()
			.filter((name) -> RecordKey.nameInKey(name).equals(operation) || abbreviates(operation, name))
			.toList();
		if (matches.size() > 1) {
			throw new InvalidEndpointRequestException("Operation '" + operation + "' is ambiguous: " + matches,
					"Operation '" + operation + "' names more than one operation: " + matches + "; give the full name");
		}
		return matches.isEmpty() ? operation : matches.get(0);
	}

	private static boolean abbreviates(String operation, String name) {
		Matcher parts = DEFAULT_NAME.matcher(name);
		return parts.matches() && (operation.equals(parts.group(1) + "." + parts.group(2))
				|| operation.equals(parts.group(1) + "#" + parts.group(2)));
	}

	RecordDescriptor describe(IdempotencyRecord record, Instant now, boolean showResult) {
		// The scope, operation and client key of the record key; a hashed one shows none.
		String storedKey = record.key().value();
		String[] parts = storedKey.startsWith(this.keyPrefix + ":")
				? storedKey.substring(this.keyPrefix.length() + 1).split(":", -1) : new String[0];
		boolean shown = parts.length == 3;
		String operation = shown ? this.operationNames.get()
			.stream()
			.filter((name) -> RecordKey.nameInKey(name).equals(parts[1]))
			.findFirst()
			.orElse(unescape(parts[1])) : null;
		Duration age = record.age(now);
		String expiresIn = (record.expiresIn() != null) ? record.expiresIn().toString() : null;
		String result = null;
		String resultBase64 = null;
		ResponseDescriptor response = null;
		String reason = record.damage();
		if (record.result() != null && showResult) {
			try {
				RecordedResponse recorded = RecordedResponse.read(record.result(), MAX_SHOWN_SIZE);
				if (recorded != null) {
					String text = text(recorded.body(), recorded.contentType());
					response = new ResponseDescriptor(recorded.status(), recorded.headers(), text,
							(text != null) ? null : Base64.getEncoder().encodeToString(recorded.body()));
				}
				else {
					byte[] bytes = RecordedResponse.readOther(record.result(), MAX_SHOWN_SIZE);
					result = decode(bytes, StandardCharsets.UTF_8);
					resultBase64 = (result != null) ? null : Base64.getEncoder().encodeToString(bytes);
				}
			}
			catch (IllegalArgumentException ex) {
				reason = "its stored result cannot be read: " + ex.getMessage();
			}
		}
		boolean inProgress = record.state() == IdempotencyRecord.State.IN_PROGRESS;
		return new RecordDescriptor(operation, shown ? unescape(parts[0]) : null, shown ? unescape(parts[2]) : null,
				storedKey, record.state().name(), (record.claimedAt() != null) ? record.claimedAt().toString() : null,
				(age != null) ? age.withNanos(0).toString() : null, inProgress ? expiresIn : null,
				inProgress ? null : expiresIn,
				(showResult && record.fingerprint() != null) ? hash(record.fingerprint().value()) : null,
				(record.result() != null) ? record.result().size() : null, result, resultBase64, response, reason);
	}

	/** Undoes the escaping of {@link RecordKey#of}. */
	private static String unescape(String part) {
		return part.replace("%3A", ":").replace("%7B", "{").replace("%7D", "}").replace("%7E", "~").replace("%25", "%");
	}

	// Hashed again: records can be compared, and a fingerprint that is no digest reveals
	// nothing. Still shown only as show-values allows: a hash lets a reader test guesses
	// of a low-entropy payload.
	private static String hash(String fingerprint) {
		byte[] digest = RecordKey.sha256().digest(fingerprint.getBytes(StandardCharsets.UTF_8));
		return "sha256:" + HexFormat.of().formatHex(digest, 0, 8);
	}

	private static @Nullable String text(byte[] body, @Nullable String contentType) {
		try {
			MimeType type = MimeTypeUtils.parseMimeType(contentType);
			boolean text = type.getType().equals("text") || type.getSubtype().matches("(.*\\+)?(json|xml)");
			return text ? decode(body, (type.getCharset() != null) ? type.getCharset() : StandardCharsets.UTF_8) : null;
		}
		catch (IllegalArgumentException ex) {
			return null;
		}
	}

	private static @Nullable String decode(byte[] bytes, Charset charset) {
		try {
			// A new decoder reports undecodable bytes: it replaces none.
			return charset.newDecoder().decode(ByteBuffer.wrap(bytes)).toString();
		}
		catch (CharacterCodingException ex) {
			return null;
		}
	}

	/** A page of records in progress; pass {@code cursor} for the next page. */
	public record InProgressDescriptor(String olderThan, List<RecordDescriptor> records, @Nullable String cursor) {
	}

	/**
	 * One record. Durations are ISO-8601; a field without a value is left out.
	 *
	 * @param key the client's key, when the record key shows it (a long key is hashed)
	 * @param fingerprint SHA-256 of the payload fingerprint, shortened
	 * @param result the stored return value, when shown and text (decompressed)
	 * @param resultBase64 the stored return value, when shown and not text
	 * @param response the stored HTTP response, when shown and the result is one
	 */
	@JsonInclude(JsonInclude.Include.NON_NULL)
	public record RecordDescriptor(@Nullable String operation, @Nullable String scope, @Nullable String key,
			String storedKey, String state, @Nullable String claimedAt, @Nullable String age,
			@Nullable String leaseRemaining, @Nullable String expiresIn, @Nullable String fingerprint,
			@Nullable Integer resultSize, @Nullable String result, @Nullable String resultBase64,
			@Nullable ResponseDescriptor response, @Nullable String reason) {
	}

	/**
	 * A stored HTTP response, as a replay writes it.
	 *
	 * @param body the body as text, when it is text and decodes in its charset
	 * @param bodyBase64 the body otherwise
	 */
	@JsonInclude(JsonInclude.Include.NON_NULL)
	public record ResponseDescriptor(int status, Map<String, List<String>> headers, @Nullable String body,
			@Nullable String bodyBase64) {
	}

}
