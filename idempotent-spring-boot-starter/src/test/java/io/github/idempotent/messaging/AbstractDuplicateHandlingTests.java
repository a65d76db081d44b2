package io.github.idempotent.messaging;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;

import io.github.idempotent.core.IdempotencyContext;
import io.github.idempotent.core.IdempotencyScopeResolver;
import io.github.idempotent.store.IdempotencyRecord;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.InspectableIdempotencyStore;
import io.github.idempotent.store.RecordKey;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code @Idempotent(onDuplicate)} on listener methods, against a real broker and a real
 * store, each case written once and run on each broker: one message delivered twice with
 * the same key is replayed, skipped or handed to the listener again flagged; either way
 * it is settled (acknowledged, or its offset committed) and nothing is dead-lettered, and
 * each way is counted in {@code idempotent.calls}. One subclass per broker (and store):
 * its application has a listener per mode ({@code replay}, {@code skip}, {@code flag})
 * whose {@code @Idempotent} name is {@link #operation(String)} and which records its runs
 * through {@link Listeners#ship}.
 */
public abstract class AbstractDuplicateHandlingTests {

	@Autowired
	private Listeners listeners;

	@Autowired
	private MeterRegistry meters;

	@Autowired
	private IdempotencyStore store;

	@Value("${idempotent.key-prefix}")
	private String prefix;

	/**
	 * The {@code @Idempotent} name of the listener of {@code mode}.
	 */
	protected abstract String operation(String mode);

	/**
	 * Sends the message {@code order-1} to the listener of {@code mode}, keyed by
	 * {@code key}.
	 */
	protected abstract void deliver(String mode, String key) throws Exception;

	/**
	 * Every message sent to the listener of {@code mode} has been settled (acknowledged,
	 * or its offset committed), none dead-lettered.
	 */
	protected abstract void assertSettled(String mode) throws Exception;

	/**
	 * The listener of {@code mode} answered exactly {@code replies}, in order: each
	 * message asks for a reply (RabbitMQ's reply-to, Kafka's {@code @SendTo}), which
	 * shows what a duplicate was answered (the stored result, nothing, or the flagged
	 * run's own).
	 */
	protected abstract void assertReplies(String mode, String... replies);

	@Test
	protected void replayedDuplicateRunsTheListenerOnceAndAnswersWithTheStoredResult() throws Exception {
		String key = deliverTwice("replay");
		await().atMost(Duration.ofSeconds(30)).until(() -> count("replay", "replayed") == 1);
		assertSettled("replay");
		assertReplies("replay", "shipped order-1 #1", "shipped order-1 #1");
		assertThat(this.listeners.runs(operation("replay"))).containsExactly(key + " first");
	}

	@Test
	protected void skippedDuplicateIsSettledWithoutRunningTheListenerOrAnswering() throws Exception {
		String key = deliverTwice("skip");
		await().atMost(Duration.ofSeconds(30)).until(() -> count("skip", "skipped") == 1);
		assertSettled("skip");
		assertReplies("skip", "shipped order-1 #1");
		assertThat(this.listeners.runs(operation("skip"))).containsExactly(key + " first");
		assertThat(count("skip", "skipped")).isEqualTo(1);
		assertThat(count("skip", "replayed")).isZero();
	}

	@Test
	protected void flaggedDuplicateRunsTheListenerAgainWhichSeesItIsADuplicateAndTheStoredResultStays()
			throws Exception {
		String key = UUID.randomUUID().toString();
		deliver("flag", key);
		IdempotencyRecord first = awaitCompleted("flag", key);
		deliver("flag", key);
		await().atMost(Duration.ofSeconds(30)).until(() -> this.listeners.runs(operation("flag")).size() == 2);
		assertSettled("flag");
		assertReplies("flag", "shipped order-1 #1", "already shipped order-1 #2");
		assertThat(this.listeners.runs(operation("flag"))).containsExactly(key + " first", key + " duplicate");
		assertThat(count("flag", "flagged")).isEqualTo(1);
		IdempotencyRecord after = awaitCompleted("flag", key);
		assertThat(after.fingerprint()).isEqualTo(first.fingerprint());
		assertThat(after.result()).isEqualTo(first.result());
	}

	/**
	 * The message delivered, its processing stored, and the same message delivered again.
	 */
	private String deliverTwice(String mode) throws Exception {
		String key = UUID.randomUUID().toString();
		deliver(mode, key);
		awaitCompleted(mode, key);
		deliver(mode, key);
		return key;
	}

	private IdempotencyRecord awaitCompleted(String mode, String key) {
		InspectableIdempotencyStore records = (InspectableIdempotencyStore) this.store;
		RecordKey recordKey = RecordKey.of(this.prefix, IdempotencyScopeResolver.GLOBAL, operation(mode), key,
				this.store.maxKeyLength());
		await().atMost(Duration.ofSeconds(30))
			.until(() -> records.inspect(recordKey)
				.filter((record) -> record.state() == IdempotencyRecord.State.COMPLETED)
				.isPresent());
		return records.inspect(recordKey).orElseThrow();
	}

	private double count(String mode, String outcome) {
		Counter counter = this.meters.find("idempotent.calls")
			.tags("operation", operation(mode), "outcome", outcome)
			.counter();
		return (counter != null) ? counter.count() : 0;
	}

	/**
	 * Every run of a listener, as its key and whether it ran as a duplicate.
	 */
	public static class Listeners {

		private final Map<String, List<String>> runs = new ConcurrentHashMap<>();

		/**
		 * The runs of the listener named {@code operation}, in order. Public: the bean is
		 * a class-based proxy in the listeners' package, which cannot override a
		 * package-private method of this one and would run it on its own empty fields.
		 */
		public List<String> runs(String operation) {
			return this.runs.computeIfAbsent(operation, (k) -> new CopyOnWriteArrayList<>());
		}

		/**
		 * Records the run of the listener named {@code operation} and answers what it
		 * shipped.
		 */
		public String ship(String operation, String order) {
			IdempotencyContext context = IdempotencyContext.current().orElseThrow();
			List<String> runs = runs(operation);
			runs.add(context.getKey() + (context.isDuplicate() ? " duplicate" : " first"));
			return (context.isDuplicate() ? "already shipped " : "shipped ") + order + " #" + runs.size();
		}

	}

}
