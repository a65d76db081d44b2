package io.github.idempotent.test;

/**
 * Sends one request through a test client with an idempotency key, unless the request
 * names one itself.
 *
 * @param <R> how the test describes a request to that client
 */
@FunctionalInterface
interface Exchange<R> {

	ExchangedResponse send(R request, String key);

}
