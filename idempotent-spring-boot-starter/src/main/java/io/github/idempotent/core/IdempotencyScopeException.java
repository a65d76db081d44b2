package io.github.idempotent.core;

/**
 * The scope of a call cannot be known, or its resolver answered a blank one: no caller
 * could be found where one is expected (Spring Security is present, but the thread
 * carries no authentication: an executor thread, {@code @Async}, a scheduled job, a
 * reactive call without a security context), so that the call would otherwise have shared
 * its records with every other caller. A bug of the application, not of the caller, so an
 * HTTP call answers a server error (500, as for any {@link IllegalStateException}); the
 * message says how to pass the scope.
 */
public class IdempotencyScopeException extends IllegalStateException {

	public IdempotencyScopeException(String message) {
		super(message);
	}

}
