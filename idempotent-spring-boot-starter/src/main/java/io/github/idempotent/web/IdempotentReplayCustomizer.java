package io.github.idempotent.web;

/**
 * Sees each HTTP replay of an {@code @Idempotent} handler before it is written, and may
 * add or set its headers (not its status, body, or the headers the starter owns or never
 * replays). Declare any number as beans; they run in
 * {@link org.springframework.core.annotation.Order order}. A customizer that throws is
 * logged and its changes dropped; the replay goes on. See docs/http.md, "Headers and
 * counts on a replay".
 */
@FunctionalInterface
public interface IdempotentReplayCustomizer {

	/**
	 * Adds or sets headers on a replay through {@link ReplayedResponse#setHeader} and
	 * {@link ReplayedResponse#addHeader}.
	 */
	void customize(ReplayedResponse replay);

}
