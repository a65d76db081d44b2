package io.github.idempotent.actuate;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AddLifecycleHook;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.Show;

import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.StoredResult;
import io.github.idempotent.store.memory.InMemoryIdempotencyStore;
import io.github.idempotent.testsupport.QuietLogs;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Actuator endpoint's path and query parameters as an operator (or whoever reaches
 * the endpoint) types them: any operation name, key segments, scope, age, cursor and
 * limit. Each call answers (a record, none, a page, a deletion's outcome) or refuses with
 * {@link InvalidEndpointRequestException} (400); nothing else escapes as a 500, and no
 * parameter reaches a record of another operation or scope. The store holds a completed
 * record, a placeholder, and a completed record whose result is damaged.
 * <p>
 * Tries: {@code jqwik.tries.default} (src/test/resources/junit-platform.properties);
 * {@code -Djqwik.tries.default=200000} for a long run.
 */
@AddLifecycleHook(QuietLogs.ForProperties.class)
class EndpointPathPropertyTests {

	private static final String PREFIX = "idempotent";

	private static final Set<String> OPERATIONS = Set.of("com.example.OrderController#create(java.lang.String)",
			"payments", "a:b{c}~%d");

	@Property
	void anyPathIsAnsweredOrABadRequest(@ForAll("operations") String operation, @ForAll("segments") List<String> key,
			@ForAll("texts") String scope, @ForAll("texts") String olderThan, @ForAll("texts") String cursor,
			@ForAll("limits") Integer limit) {
		InMemoryIdempotencyStore store = storeWithRecords();
		IdempotencyEndpoint endpoint = new IdempotencyEndpoint(store, () -> OPERATIONS, PREFIX, Show.ALWAYS, Set.of(),
				() -> {
				});
		List<String> path = new ArrayList<>(key);
		path.add(0, operation);
		String[] segments = path.toArray(String[]::new);
		answeredOrRefused(() -> endpoint.record(segments, scope, SecurityContext.NONE));
		answeredOrRefused(() -> endpoint.inProgress(olderThan, cursor, limit));
		answeredOrRefused(() -> endpoint.delete(segments, scope, Boolean.TRUE, SecurityContext.NONE));
		answeredOrRefused(() -> endpoint.delete(segments, scope, null, SecurityContext.NONE));
		answeredOrRefused(() -> endpoint.record(segments, scope, SecurityContext.NONE));
	}

	@Property
	void aStoredKeyNamesItsPartsOrNone(@ForAll("texts") String scope, @ForAll("operations") String operation,
			@ForAll("texts") String key) {
		if (scope.isEmpty() || operation.isEmpty() || key.isEmpty()) {
			return;
		}
		RecordKey recordKey;
		try {
			recordKey = RecordKey.of(PREFIX, scope, operation, key, 512);
		}
		catch (IllegalArgumentException ex) {
			return;
		}
		KeyParts parts = KeyParts.parse(PREFIX, recordKey.value(), OPERATIONS);
		if (parts.key() != null) {
			assertThat(parts.key()).isEqualTo(key);
			assertThat(parts.scope()).isEqualTo(scope);
		}
		KeyParts.parse(PREFIX, recordKey.value().substring(0, recordKey.value().length() / 2), OPERATIONS);
	}

	private static void answeredOrRefused(ThrowingCall call) {
		try {
			call.run();
		}
		catch (InvalidEndpointRequestException ex) {
			assertThat(ex.getReason()).isNotBlank();
		}
	}

	private static InMemoryIdempotencyStore storeWithRecords() {
		InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
		Fingerprint payload = new Fingerprint("payload");
		RecordKey completed = RecordKey.of(PREFIX, "_", "payments", "done", 512);
		ClaimResult.Acquired claim = (ClaimResult.Acquired) store.claim(completed, payload, Duration.ofMinutes(1));
		store.complete(completed, claim.token(), payload, new StoredResult("V\"ok\"".getBytes(StandardCharsets.UTF_8)),
				Duration.ofHours(1));
		RecordKey damaged = RecordKey.of(PREFIX, "_", "payments", "damaged", 512);
		claim = (ClaimResult.Acquired) store.claim(damaged, payload, Duration.ofMinutes(1));
		store.complete(damaged, claim.token(), payload, new StoredResult(new byte[] { 'Z', 0x7F, -1, -1, -1, 1 }),
				Duration.ofHours(1));
		store.claim(RecordKey.of(PREFIX, "_", "payments", "running", 512), payload, Duration.ofMinutes(1));
		return store;
	}

	@Provide
	Arbitrary<String> operations() {
		return Arbitraries.oneOf(Arbitraries.of(OPERATIONS), Arbitraries.of("OrderController.create",
				"OrderController#create", "payments~00000000", "", " ", "#", "#(", "a#b(", ".#(", ":", "%"), texts());
	}

	@Provide
	Arbitrary<List<String>> segments() {
		return Arbitraries.oneOf(Arbitraries.of("done", "damaged", "running"), texts()).list().ofMaxSize(3);
	}

	@Provide
	Arbitrary<String> texts() {
		return Arbitraries.oneOf(Arbitraries.strings().withChars(":%{}~#(). _/-aZ09").ofMaxLength(12),
				Arbitraries.strings().ofMaxLength(40), Arbitraries.strings().ofLength(600));
	}

	@Provide
	Arbitrary<Integer> limits() {
		return Arbitraries
			.oneOf(Arbitraries.of(Integer.MIN_VALUE, -1, 0, 1, Integer.MAX_VALUE),
					Arbitraries.integers().between(-5, 2000))
			.injectNull(0.2);
	}

	@FunctionalInterface
	private interface ThrowingCall {

		void run();

	}

}
