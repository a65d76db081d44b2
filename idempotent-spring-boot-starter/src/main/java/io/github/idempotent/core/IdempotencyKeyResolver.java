package io.github.idempotent.core;

import java.util.List;
import java.util.Objects;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;

/**
 * Supplies the key of a call whose annotation has no key expression: the
 * {@code Idempotency-Key} header of the current HTTP request, or a message's id.
 */
@FunctionalInterface
public interface IdempotencyKeyResolver {

	/**
	 * The key of the current call, or {@code null} when the context has none.
	 * @throws IdempotencyKeyException when a key is present but malformed
	 */
	@Nullable String resolveKey();

	/** Where the key comes from, for the message that tells a caller what to send. */
	default String describeSource() {
		return "a key expression on the annotation";
	}

	/** Whether the current thread is in the context this resolver reads (a request). */
	default boolean appliesToCurrentCall() {
		return true;
	}

	/**
	 * Whether the current call has no caller to scope its key by, such as a message: it
	 * then takes the {@link IdempotencyScopeResolver#GLOBAL global} scope instead of
	 * failing with {@link IdempotencyScopeException}.
	 */
	default boolean isCallerless() {
		return false;
	}

	/**
	 * A SpEL variable the context offers to expressions ({@code #headers} of a message),
	 * or {@code null}. Method arguments take precedence.
	 */
	default @Nullable Object resolveVariable(String name) {
		return null;
	}

	/** Resolver that answers with the first key of the {@code resolvers} that apply. */
	static IdempotencyKeyResolver composite(List<? extends IdempotencyKeyResolver> resolvers) {
		if (resolvers.size() == 1) {
			return resolvers.get(0);
		}
		if (resolvers.isEmpty()) {
			return () -> null;
		}
		List<IdempotencyKeyResolver> all = List.copyOf(resolvers);
		return new IdempotencyKeyResolver() {

			private Stream<IdempotencyKeyResolver> applying() {
				return all.stream().filter(IdempotencyKeyResolver::appliesToCurrentCall);
			}

			private IdempotencyKeyResolver current() {
				return applying().findFirst().orElse(all.get(0));
			}

			// The first key among those that apply: an application's resolver with no key
			// outside its context leaves a message's key to the next.
			@Override
			public @Nullable String resolveKey() {
				return applying().map(IdempotencyKeyResolver::resolveKey)
					.filter(Objects::nonNull)
					.findFirst()
					.orElse(null);
			}

			@Override
			public String describeSource() {
				return current().describeSource();
			}

			@Override
			public boolean appliesToCurrentCall() {
				return applying().findAny().isPresent();
			}

			@Override
			public boolean isCallerless() {
				return applying().findFirst().map(IdempotencyKeyResolver::isCallerless).orElse(false);
			}

			@Override
			public @Nullable Object resolveVariable(String name) {
				return current().resolveVariable(name);
			}

		};
	}

}
