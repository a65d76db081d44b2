package io.github.idempotent.core;

/**
 * Supplies the scope of a call whose annotation names none: the records of one scope are
 * invisible to every other, so that one caller can never replay another's response.
 */
@FunctionalInterface
public interface IdempotencyScopeResolver {

	/**
	 * Scope used when nothing identifies the caller.
	 */
	String GLOBAL = "_";

	/**
	 * Resolver that puts every caller in the {@link #GLOBAL} scope.
	 */
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
	 * The scope of the current call; {@link #GLOBAL} when there is no caller identity.
	 */
	String resolveScope();

	/**
	 * Whether this resolver gives different callers different scopes; {@code false} for
	 * one shared by all, which makes the start-up warn about keys any caller can send.
	 */
	default boolean separatesCallers() {
		return true;
	}

}
