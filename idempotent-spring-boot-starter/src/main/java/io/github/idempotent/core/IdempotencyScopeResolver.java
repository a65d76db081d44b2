package io.github.idempotent.core;

/**
 * Supplies the scope of a call whose annotation names none: the records of one scope are
 * invisible to every other, so that one caller can never replay another's response.
 * <p>
 * A call on a thread that carries its caller (a Spring MVC request, a blocking call) asks
 * {@link #resolveScope()}; a call whose caller lives in its Reactor context instead (a
 * {@code Mono}, any handler on WebFlux, the template's {@code executeMono}) asks a
 * {@link ReactiveIdempotencyScopeResolver}, which by default asks this one. A resolver
 * that cannot tell who the caller is throws {@link IdempotencyScopeException} rather than
 * answer {@link #GLOBAL}: a blank scope is refused.
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
	 * The scope of the current call, from the calling thread.
	 * @throws IdempotencyScopeException when the caller cannot be found
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
