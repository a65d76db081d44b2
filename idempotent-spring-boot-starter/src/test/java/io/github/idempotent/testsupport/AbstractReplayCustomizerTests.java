package io.github.idempotent.testsupport;

import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.core.annotation.Order;

import io.github.idempotent.web.IdempotentReplayCustomizer;
import io.github.idempotent.web.ReplayedResponse;

import static io.github.idempotent.testsupport.ExactReplays.post;
import static io.github.idempotent.testsupport.ExactReplays.send;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link IdempotentReplayCustomizer}s through HTTP: three of them, in order, the middle
 * one broken; one subclass per web stack, store and kind of replay.
 */
public abstract class AbstractReplayCustomizerTests {

	@LocalServerPort
	private int port;

	@Autowired
	private Replays replays;

	/**
	 * How many times the method behind {@code counter} ran.
	 */
	protected abstract int runs(String counter);

	/**
	 * Whether a replay of {@code endpoint} is a recorded response, rather than a value.
	 */
	protected abstract boolean recorded(String endpoint);

	@ParameterizedTest
	@ValueSource(strings = { "untyped-entity", "object" })
	protected void customizersSeeEachReplayAndSetHeadersOnItOnly(String endpoint) throws Exception {
		String key = UUID.randomUUID().toString();
		HttpResponse<byte[]> first = send(post(this.port, "/exact/" + endpoint, key).build());
		assertThat(first.headers().map()).doesNotContainKeys("x-replay-of", "x-replay-key", "x-hooks");
		assertThat(this.replays.of(key)).isEmpty();

		HttpResponse<byte[]> replay = send(post(this.port, "/exact/" + endpoint, key).build());
		assertThat(replay.statusCode()).isEqualTo(first.statusCode());
		assertThat(replay.body()).isEqualTo(first.body());
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(replay.headers().firstValue("Idempotency-Key")).hasValue(key);
		assertThat(replay.headers().firstValue("X-Replay-Key")).hasValue(key);
		assertThat(replay.headers().firstValue("X-Replay-Of")).hasValueSatisfying((operation) -> assertThat(operation)
			.contains(endpoint.equals("object") ? "object(" : "untypedEntity("));
		// In order, the broken one in between changed nothing and stopped nothing.
		assertThat(replay.headers().allValues("X-Hooks")).containsExactly("first", "second-after-first");
		assertThat(replay.headers().map()).doesNotContainKey("x-broken");
		assertThat(runs(endpoint.equals("object") ? "exact-object" : "exact-untyped")).isEqualTo(1);

		// Counted by a value of the stored response: the run in the body.
		assertThat(this.replays.of(key)).singleElement().satisfies((seen) -> {
			assertThat(seen.operation()).isEqualTo(replay.headers().firstValue("X-Replay-Of").orElseThrow());
			assertThat(seen.status()).isEqualTo(first.statusCode());
			assertThat(seen.recorded()).isEqualTo(recorded(endpoint));
			assertThat(seen.run()).isEqualTo("1");
		});
		send(post(this.port, "/exact/" + endpoint, key).build());
		assertThat(this.replays.of(key)).hasSize(2);
	}

	@ParameterizedTest
	@ValueSource(strings = { "untyped-entity" })
	protected void aCustomizerSetsAStoredHeaderInPlaceOfItsValue(String endpoint) throws Exception {
		String key = UUID.randomUUID().toString();
		HttpResponse<byte[]> first = send(post(this.port, "/exact/" + endpoint, key).build());
		HttpResponse<byte[]> replay = send(post(this.port, "/exact/" + endpoint, key).build());
		String run = first.headers().firstValue("X-Run").orElseThrow();
		assertThat(replay.headers().allValues("X-Run")).containsExactly("replay-of-" + run);
		// The record is not changed: the next replay starts from the stored value again.
		HttpResponse<byte[]> again = send(post(this.port, "/exact/" + endpoint, key).build());
		assertThat(again.headers().allValues("X-Run")).containsExactly("replay-of-" + run);
		assertThat(again.body()).isEqualTo(first.body());
	}

	/**
	 * What the customizers saw, by idempotency key.
	 */
	public static class Replays {

		private final List<Seen> seen = new CopyOnWriteArrayList<>();

		void add(ReplayedResponse replay) {
			this.seen.add(new Seen(replay.operation(), replay.key(), replay.status(), true, run(replay)));
		}

		public List<Seen> of(String key) {
			return this.seen.stream().filter((seen) -> seen.key().equals(key)).toList();
		}

		/**
		 * The business value: the run in the body bytes.
		 */
		private static @Nullable String run(ReplayedResponse replay) {
			Matcher matcher = Pattern.compile("\"run\":(\\d+)").matcher(new String(replay.body()));
			return matcher.find() ? matcher.group(1) : null;
		}

	}

	public record Seen(String operation, String key, int status, boolean recorded, @Nullable String run) {
	}

	/**
	 * Three customizers, declared out of order: the first counts and marks, the broken
	 * one sets a header, then one that is refused, and the last sees what the first set.
	 */
	@TestConfiguration(proxyBeanMethods = false)
	public static class Customizers {

		@Bean
		Replays replays() {
			return new Replays();
		}

		@Bean
		@Order(3)
		IdempotentReplayCustomizer second() {
			return (replay) -> {
				replay.addHeader("X-Hooks",
						replay.headers().containsHeader("X-Replay-Of") ? "second-after-first" : "second-alone");
				String run = replay.headers().getFirst("X-Run");
				if (run != null) {
					replay.setHeader("X-Run", "replay-of-" + run);
				}
			};
		}

		@Bean
		@Order(2)
		IdempotentReplayCustomizer broken() {
			return (replay) -> {
				replay.setHeader("X-Broken", "yes");
				replay.setHeader("Idempotent-Replayed", "false");
			};
		}

		@Bean
		@Order(1)
		IdempotentReplayCustomizer first(Replays replays) {
			return (replay) -> {
				replays.add(replay);
				replay.setHeader("X-Replay-Of", replay.operation());
				replay.setHeader("X-Replay-Key", replay.key());
				replay.addHeader("X-Hooks", "first");
			};
		}

	}

}
