package io.github.idempotent.core;

import java.util.List;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An application with controllers and listeners has a key resolver per context: the one
 * whose context the call runs in answers.
 */
class CompositeKeyResolverTests {

	@Test
	void theResolverWhoseContextIsCurrentAnswers() {
		Context http = new Context("header", "the header");
		Context message = new Context("message-id", "the message-id");
		IdempotencyKeyResolver composite = IdempotencyKeyResolver.composite(List.of(http, message));
		message.active = true;
		assertThat(composite.resolveKey()).isEqualTo("message-id");
		assertThat(composite.describeSource()).isEqualTo("the message-id");
		assertThat(composite.resolveVariable("headers")).isEqualTo("message-id-headers");
		message.active = false;
		http.active = true;
		assertThat(composite.resolveKey()).isEqualTo("header");
		assertThat(composite.describeSource()).isEqualTo("the header");
	}

	@Test
	void aResolverThatAlwaysAppliesButHasNoKeyLeavesTheKeyToTheNext() {
		IdempotencyKeyResolver custom = () -> null;
		Context message = new Context("message-id", "the message-id");
		message.active = true;
		assertThat(IdempotencyKeyResolver.composite(List.of(custom, message)).resolveKey()).isEqualTo("message-id");
	}

	@Test
	void noContextNoKey() {
		IdempotencyKeyResolver composite = IdempotencyKeyResolver
			.composite(List.of(new Context("a", "source a"), new Context("b", "source b")));
		assertThat(composite.resolveKey()).isNull();
		assertThat(composite.describeSource()).isEqualTo("source a");
	}

	private static final class Context implements IdempotencyKeyResolver {

		private final String key;

		private final String source;

		boolean active;

		Context(String key, String source) {
			this.key = key;
			this.source = source;
		}

		@Override
		public @Nullable String resolveKey() {
			return this.active ? this.key : null;
		}

		@Override
		public String describeSource() {
			return this.source;
		}

		@Override
		public boolean appliesToCurrentCall() {
			return this.active;
		}

		@Override
		public @Nullable Object resolveVariable(String name) {
			return this.active ? this.key + "-" + name : null;
		}

	}

}
