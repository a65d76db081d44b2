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
	 * Whether the current call, in this resolver's context, has no caller to scope its
	 * key by: a message, whose key (its id) is the same whoever sent it. Such a call
	 * takes the {@link IdempotencyScopeResolver#GLOBAL global} scope when the scope
	 * resolver finds no caller, where any other call fails with
	 * {@link IdempotencyScopeException}.
	 */
	default boolean isCallerless() {
		return false;
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
	 * Resolver that answers with the first key of those of {@code resolvers} that apply
	 * to the current call; its source and variables are those of the first that applies,
	 * or of the first of all when none does.
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

			/**
			 * The first key among the resolvers that apply: a resolver of the
			 * application's that does not override {@code appliesToCurrentCall} and has
			 * no key outside its own context leaves the message's key to the next.
			 */
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
