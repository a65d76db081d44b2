package io.github.idempotent.core;

/**
 * Supplies the scope of a call whose annotation names none: records of one scope are
 * invisible to every other, so one caller never replays another's response. Reactive
 * calls ask a {@link ReactiveIdempotencyScopeResolver} instead. A resolver that cannot
 * tell who the caller is throws {@link IdempotencyScopeException}.
 */
@FunctionalInterface
public interface IdempotencyScopeResolver {

	/** Scope used when nothing identifies the caller. */
	String GLOBAL = "_";

	/** Resolver that puts every caller in the {@link #GLOBAL} scope. */
	IdempotencyScopeResolver NONE = new IdempotencyScopeResolver() {

		@Override
		public String resolveScope() {
			return GLOBAL;
		}

		@Override
		public boolean separatesCallers() {
			return false;
		}

	};

	/**
	 * The scope of the current call, from the calling thread.
	 * @throws IdempotencyScopeException when the caller cannot be found
	 */
	String resolveScope();

	/**
	 * Whether this resolver gives different callers different scopes; {@code false} makes
	 * the start-up warn about keys any caller can send.
	 */
	default boolean separatesCallers() {
		return true;
	}

}
