package io.github.idempotent.core;

/**
 * The scope of a call cannot be known, such as with Spring Security present but no
 * authentication on the thread: an application bug (HTTP 500); the message says how to
 * pass the scope.
 */
public class IdempotencyScopeException extends IllegalStateException {

	public IdempotencyScopeException(String message) {
		super(message);
	}

}
