package io.github.idempotent.web;

import java.util.Arrays;
import java.util.Locale;
import java.util.Set;
import java.util.function.BiConsumer;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.http.HttpHeaders;
import org.springframework.util.Assert;

/**
 * A replay about to be written, as an {@link IdempotentReplayCustomizer} sees it. Valid
 * only during {@link IdempotentReplayCustomizer#customize}.
 */
public final class ReplayedResponse {

	private static final Log logger = LogFactory.getLog(IdempotentReplayCustomizer.class);

	private final String operation;

	private final String key;

	private final int status;

	private final byte[] body;

	private final ReplayedHeaders replayedHeaders;

	private HttpHeaders headers;

	ReplayedResponse(String operation, String key, int status, HttpHeaders stored, byte[] body,
			ReplayedHeaders replayedHeaders) {
		this.operation = operation;
		this.key = key;
		this.status = status;
		this.body = body;
		this.replayedHeaders = replayedHeaders;
		this.headers = HttpHeaders.copyOf(stored);
	}

	/** Name of the operation replayed, as in the {@code operation} tag of the metrics. */
	public String operation() {
		return this.operation;
	}

	/** Idempotency key of the call, unscoped. */
	public String key() {
		return this.key;
	}

	public int status() {
		return this.status;
	}

	/** Body bytes as the first caller got them, copied. */
	public byte[] body() {
		return Arrays.copyOf(this.body, this.body.length);
	}

	/**
	 * Headers the replay carries (read-only): the stored ones and those earlier
	 * customizers set, without those each response gets anew.
	 */
	public HttpHeaders headers() {
		return HttpHeaders.readOnlyHttpHeaders(this.headers);
	}

	/**
	 * Sets a header on the replay, in place of its stored values.
	 * @throws IllegalArgumentException for a header the library owns or never replays
	 */
	public void setHeader(String name, String value) {
		change(name, value, this.headers::set);
	}

	/**
	 * Adds a value to a header of the replay, after its stored values.
	 * @throws IllegalArgumentException for a header the library owns or never replays
	 */
	public void addHeader(String name, String value) {
		change(name, value, this.headers::add);
	}

	// Changing one would make the client decode the stored bytes differently.
	private static final Set<String> DECODING_HEADERS = Set.of("content-type", "content-encoding", "content-range",
			"transfer-encoding");

	private void change(String name, String value, BiConsumer<String, String> change) {
		Assert.hasText(name, "name must not be empty");
		Assert.notNull(value, "value must not be null");
		Assert.isTrue(
				name.chars()
					.allMatch((c) -> Character.isLetterOrDigit(c) && c < 0x80 || "!#$%&'*+-.^_`|~".indexOf(c) >= 0),
				() -> "'" + name + "' is not a header name: use letters, "
						+ "digits and !#$%&'*+-.^_`|~ only, without spaces");
		Assert.isTrue(value.indexOf('\r') < 0 && value.indexOf('\n') < 0,
				() -> "The value of the " + name + " header must not contain a line break");
		if (DECODING_HEADERS.contains(name.toLowerCase(Locale.ROOT)) || !this.replayedHeaders.isReplayed(name)) {
			throw new IllegalArgumentException("The " + name + " header of a replay is not a customizer's to set: "
					+ "the idempotency starter sets it on every response, or never replays it");
		}
		change.accept(name, value);
	}

	// A customizer that throws is logged and leaves the headers as they were.
	void customize(IdempotentReplayCustomizer customizer) {
		HttpHeaders before = HttpHeaders.copyOf(this.headers);
		try {
			customizer.customize(this);
		}
		catch (RuntimeException | LinkageError ex) {
			this.headers = before;
			logger.warn("Replay customizer " + customizer.getClass().getName() + " failed on a replay of "
					+ this.operation + " for key '" + this.key + "'; the replay is sent without the headers it set",
					ex);
		}
	}

}
