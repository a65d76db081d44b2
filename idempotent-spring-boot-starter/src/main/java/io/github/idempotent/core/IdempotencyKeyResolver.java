package io.github.idempotent.core;

import java.util.List;

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

	/**
	 * Where the key comes from, for the message that tells a caller what to send.
	 */
	default String describeSource() {
		return "a key expression on the annotation";
	}

	/**
	 * Whether the current thread is in the context this resolver reads (an HTTP request,
	 * a message being handled).
	 */
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

	/**
	 * Resolver that answers with the first key among {@code resolvers} that apply to the
	 * current call.
	 */
	static IdempotencyKeyResolver composite(List<? extends IdempotencyKeyResolver> resolvers) {
		if (resolvers.size() == 1) {
			return resolvers.get(0);
		}
		if (resolvers.isEmpty()) {
			return () -> null;
		}
		List<IdempotencyKeyResolver> all = List.copyOf(resolvers);
		return new IdempotencyKeyResolver() {

			private IdempotencyKeyResolver current() {
				for (IdempotencyKeyResolver resolver : all) {
					if (resolver.appliesToCurrentCall()) {
						return resolver;
					}
				}
				return all.get(0);
			}

			// The first key among those that apply: an application's resolver with no key
			// outside its context leaves a message's key to the next.
			@Override
			public @Nullable String resolveKey() {
				for (IdempotencyKeyResolver resolver : all) {
					if (resolver.appliesToCurrentCall()) {
						String key = resolver.resolveKey();
						if (key != null) {
							return key;
						}
					}
				}
				return null;
			}

			@Override
			public String describeSource() {
				return current().describeSource();
			}

			@Override
			public boolean appliesToCurrentCall() {
				return all.stream().anyMatch(IdempotencyKeyResolver::appliesToCurrentCall);
			}

			@Override
			public boolean isCallerless() {
				for (IdempotencyKeyResolver resolver : all) {
					if (resolver.appliesToCurrentCall()) {
						return resolver.isCallerless();
					}
				}
				return false;
			}

			@Override
			public @Nullable Object resolveVariable(String name) {
				return current().resolveVariable(name);
			}

		};
	}

}
