package io.github.idempotent.actuate;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.Show;

import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.actuate.IdempotencyEndpoint.RecordDescriptor;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.IdempotencyRecord;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.StoredResult;
import io.github.idempotent.store.memory.InMemoryIdempotencyStore;
import io.github.idempotent.testsupport.Draw;
import io.github.idempotent.testsupport.QuietLogs;
import io.github.idempotent.testsupport.Tries;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Actuator endpoint's path and query parameters as an operator (or whoever reaches
 * the endpoint) types them: any operation name, key segments, scope, age, cursor and
 * limit. Each call answers (a record, none, a page, a deletion's outcome) or refuses with
 * {@link InvalidEndpointRequestException} (400); nothing else escapes as a 500, and no
 * parameter reaches a record of another operation or scope. The store holds a completed
 * record, a placeholder, and a completed record whose result is damaged. Seeds, tries and
 * replays: {@link Tries}.
 */
class EndpointPathPropertyTests {

	private static final String PREFIX = "idempotent";

	// A list: a set's order changes from one JVM to the next, and a seed must replay.
	private static final List<String> OPERATIONS = List.of("com.example.OrderController#create(java.lang.String)",
			"payments", "a:b{c}~%d");

	@Test
	void anyPathIsAnsweredOrABadRequest() {
		try (QuietLogs quiet = QuietLogs.ofTheLibrary()) {
			Tries.check((draw) -> new Request(operation(draw),
					draw.list(0, 3,
							() -> draw.oneOf(() -> draw.choice("done", "damaged", "running"), () -> text(draw))),
					text(draw), text(draw), text(draw), limit(draw)), EndpointPathPropertyTests::isAnsweredOrRefused);
		}
	}

	@Test
	void aStoredKeyNamesItsPartsOrNone() {
		Tries.check((draw) -> new StoredKey(text(draw), operation(draw), text(draw)),
				(stored) -> namesItsPartsOrNone(stored.scope(), stored.operation(), stored.key()));
	}

	private static void isAnsweredOrRefused(Request request) {
		InMemoryIdempotencyStore store = storeWithRecords();
		IdempotencyEndpoint endpoint = new IdempotencyEndpoint(store, () -> Set.copyOf(OPERATIONS), PREFIX, Show.ALWAYS,
				Set.of(), () -> {
				});
		List<String> path = new ArrayList<>(request.key());
		path.add(0, request.operation());
		String[] segments = path.toArray(String[]::new);
		String scope = request.scope();
		answeredOrRefused(() -> endpoint.record(segments, scope, SecurityContext.NONE));
		answeredOrRefused(() -> endpoint.inProgress(request.olderThan(), request.cursor(), request.limit()));
		answeredOrRefused(() -> endpoint.delete(segments, scope, Boolean.TRUE, SecurityContext.NONE));
		answeredOrRefused(() -> endpoint.delete(segments, scope, null, SecurityContext.NONE));
		answeredOrRefused(() -> endpoint.record(segments, scope, SecurityContext.NONE));
	}

	private static void namesItsPartsOrNone(String scope, String operation, String key) {
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
		IdempotencyEndpoint descriptions = new IdempotencyEndpoint(new InMemoryIdempotencyStore(),
				() -> Set.copyOf(OPERATIONS), PREFIX, Show.NEVER, Set.of(), () -> {
				});
		RecordDescriptor parts = descriptions.describe(IdempotencyRecord.unreadable(recordKey, "drawn", null),
				Instant.now(), false);
		if (parts.key() != null) {
			assertThat(parts.key()).isEqualTo(key);
			assertThat(parts.scope()).isEqualTo(scope);
		}
		descriptions.describe(
				IdempotencyRecord.unreadable(
						new RecordKey(recordKey.value().substring(0, recordKey.value().length() / 2)), "drawn", null),
				Instant.now(), false);
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

	private static String operation(Draw draw) {
		return draw.oneOf(() -> draw.choice(OPERATIONS), () -> draw.choice("OrderController.create",
				"OrderController#create", "payments~00000000", "", " ", "#", "#(", "a#b(", ".#(", ":", "%"),
				() -> text(draw));
	}

	private static String text(Draw draw) {
		return draw.oneOf(() -> draw.string(":%{}~#(). _/-aZ09", 0, 12), () -> draw.string(0, 40),
				() -> draw.string(600, 600));
	}

	private static @Nullable Integer limit(Draw draw) {
		return draw.oneIn(5) ? null : draw.oneOf(() -> draw.choice(Integer.MIN_VALUE, -1, 0, 1, Integer.MAX_VALUE),
				() -> draw.between(-5, 2000));
	}

	private record Request(String operation, List<String> key, String scope, String olderThan, String cursor,
			@Nullable Integer limit) {
	}

	private record StoredKey(String scope, String operation, String key) {
	}

	@FunctionalInterface
	private interface ThrowingCall {

		void run();

	}

}
