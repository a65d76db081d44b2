package io.github.idempotent.core;

import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * Supplies the key of a call whose annotation has no key expression, from the calling
 * context: the {@code Idempotency-Key} header of the current HTTP request, or the id of
 * the message a listener is handling.
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
	 * a message being handled). An application with both controllers and listeners has
	 * one resolver per context; the one that applies answers for the call.
	 */
	default boolean appliesToCurrentCall() {
		return true;
	}

	/**
	 * A SpEL variable the context offers to key, scope and payload expressions
	 * ({@code #headers} of the current message), or {@code null} if it has none of that
	 * name. Arguments of the method take precedence.
	 */
	default @Nullable Object resolveVariable(String name) {
		return null;
	}

	/**
	 * Resolver that answers with the first of {@code resolvers} that applies to the
	 * current call, or with the first of all when none does.
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

			@Override
			public @Nullable String resolveKey() {
				return current().resolveKey();
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
			public @Nullable Object resolveVariable(String name) {
				return current().resolveVariable(name);
			}

		};
	}

}
