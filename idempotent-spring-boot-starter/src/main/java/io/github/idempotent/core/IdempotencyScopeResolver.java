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
	 * The scope of the current call; {@link #GLOBAL} when there is no caller identity.
	 */
	String resolveScope();

}
