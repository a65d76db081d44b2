package io.github.idempotent.core;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.core.ResolvableType;

import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.memory.InMemoryIdempotencyStore;
import io.github.idempotent.testsupport.ForwardingIdempotencyStore;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A guarded method called inside another guarded one and run unprotected (its store is
 * down under failure-mode=open) sees no {@code IdempotencyContext}, as documented, not
 * the enclosing call's "attempt 1": the method then takes its careful path.
 */
class UnprotectedNestedCallContextTests {

	@Test
	void anUnprotectedInnerCallSeesNoContext() throws Throwable {
		InMemoryIdempotencyStore memory = new InMemoryIdempotencyStore(100);
		ForwardingIdempotencyStore down = new ForwardingIdempotencyStore(memory) {
			@Override
			public ClaimResult claim(RecordKey key, Fingerprint fingerprint, Duration lease) {
				throw new UncheckedIOException(new IOException("connection refused"));
			}
		};
		AtomicReference<Optional<IdempotencyContext>> seenByInner = new AtomicReference<>();
		try (IdempotencyExecutor outer = new IdempotencyExecutor(memory, FailureMode.CLOSED, 1024,
				IdempotencyObserver.NONE);
				IdempotencyExecutor inner = new IdempotencyExecutor(down, FailureMode.OPEN, 1024,
						IdempotencyObserver.NONE)) {
			outer.execute(policy("order"), "o-1", new RecordKey("review:order:o-1"), new Fingerprint("f"), () -> {
				// The order service charges the card through a guarded charge method,
				// whose
				// store is unreachable: it runs unprotected.
				return inner.execute(policy("charge"), "c-1", new RecordKey("review:charge:c-1"), new Fingerprint("f"),
						() -> {
							seenByInner.set(IdempotencyContext.current());
							return "charged";
						}, null);
			}, null);
		}
		assertThat(seenByInner.get())
			.as("the unprotected charge call must see no context (so that it takes the careful path); it sees "
					+ "the enclosing call's: %s", seenByInner.get())
			.isEmpty();
	}

	private static IdempotencyPolicy policy(String name) {
		return new IdempotencyPolicy(name, Duration.ofMinutes(1), Duration.ofSeconds(30), Duration.ZERO,
				Duration.ofSeconds(1), List.of(),
				new JacksonResultCodec(new JsonMapper()).bind(ResolvableType.forClass(String.class)));
	}

}
