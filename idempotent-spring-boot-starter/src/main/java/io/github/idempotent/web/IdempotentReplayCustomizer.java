package io.github.idempotent.web;

/**
 * Callback that sees each HTTP replay of an {@code @Idempotent} handler method before it
 * is written, and may add or set response headers on it: to tell clients more than
 * {@code Idempotent-Replayed: true}, or to count replays by a value of the stored
 * response (an account, a currency) that the {@code idempotent.calls} metric does not
 * carry.
 * <p>
 * Called on Spring MVC and WebFlux, for a response replayed as it was recorded (the body
 * bytes) and for a return value replayed through the codec (the value), once per replay,
 * on the thread that replays it. Not called for a first call, nor for a replay of a
 * method that does not handle the request (a service method, a listener): those have no
 * response; count them with the {@code idempotent.calls} metric or the
 * {@code idempotent.call} observation.
 * <p>
 * What a customizer cannot do: change the stored record (it sees a copy), the status or
 * the body, or the headers the library owns ({@code Idempotent-Replayed}, the key echo,
 * {@code Content-Type}, framing headers) or never replays (credentials such as
 * {@code Set-Cookie}, CORS headers, those in
 * {@code idempotent.web.excluded-response-headers}): setting one of those is refused with
 * an {@link IllegalArgumentException}. A customizer that throws is logged at WARN with
 * the operation and the exception, and the replay goes on without the changes that
 * customizer made: a replay is never turned into an error or a second execution.
 * <p>
 * Declare any number as beans; they run in
 * {@link org.springframework.core.annotation.Order order}, each one seeing the headers
 * the ones before it set.
 *
 * @see ReplayedResponse
 */
@FunctionalInterface
public interface IdempotentReplayCustomizer {

	/**
	 * Looks at a replay about to be written, and adds or sets headers on it through
	 * {@link ReplayedResponse#setHeader} and {@link ReplayedResponse#addHeader}.
	 */
	void customize(ReplayedResponse replay);

}
