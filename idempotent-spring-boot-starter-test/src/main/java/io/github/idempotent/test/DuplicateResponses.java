package io.github.idempotent.test;

import java.util.ArrayList;
import java.util.List;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;

/**
 * The answers to duplicates of one request, and how many times the starter ran the method
 * for them. Sent by {@link IdempotentRequest#sentConcurrently(int)}.
 */
public final class DuplicateResponses {

	private final List<ExchangedResponse> responses;

	private final int executions;

	private final String replayedHeader;

	DuplicateResponses(List<ExchangedResponse> responses, int executions, String replayedHeader) {
		this.responses = List.copyOf(responses);
		this.executions = executions;
		this.replayedHeader = replayedHeader;
	}

	/**
	 * Every response, in the order the duplicates were sent; the last one was sent after
	 * the others were answered.
	 */
	public List<ExchangedResponse> responses() {
		return this.responses;
	}

	/**
	 * How many times the method ran for these duplicates, as the starter counted.
	 */
	public int executions() {
		return this.executions;
	}

	/**
	 * The responses marked as replays.
	 */
	public List<ExchangedResponse> replays() {
		return this.responses.stream().filter(this::isReplay).toList();
	}

	/**
	 * The {@code 409 Conflict} responses of duplicates that arrived while the first call
	 * ran.
	 */
	public List<ExchangedResponse> conflicts() {
		return this.responses.stream().filter(DuplicateResponses::isConflict).toList();
	}

	/**
	 * The response of the call that ran the method: neither a replay nor a conflict.
	 * @throws AssertionError unless there is exactly one
	 */
	public ExchangedResponse first() {
		List<ExchangedResponse> first = this.responses.stream()
			.filter((response) -> !isReplay(response) && !isConflict(response))
			.toList();
		if (first.size() != 1) {
			throw new AssertionError("Expected one response that is neither a replay (" + this.replayedHeader
					+ ": true) nor a 409, but got " + first.size() + ": " + describe(this.responses));
		}
		return first.get(0);
	}

	/**
	 * Assert that the method ran once, that one response is its own, and that every other
	 * is a replay or a {@code 409} with {@code Retry-After}.
	 */
	public DuplicateResponses assertRanOnce() {
		if (this.executions == 0) {
			throw new AssertionError("Expected the starter to run the method once for " + this.responses.size()
					+ " duplicates, but it ran none of them: is the handler @Idempotent, and does its key "
					+ "come from the request? " + describe(this.responses));
		}
		if (this.executions != 1) {
			throw new AssertionError("Expected the method to run once for " + this.responses.size()
					+ " duplicates, but it ran " + this.executions + " times: " + describe(this.responses));
		}
		first();
		for (ExchangedResponse conflict : conflicts()) {
			if (conflict.headers().getFirst(HttpHeaders.RETRY_AFTER) == null) {
				throw new AssertionError("Expected a Retry-After header on the 409 of an in-progress duplicate, "
						+ "but got " + conflict);
			}
		}
		return this;
	}

	/**
	 * Assert that every replay is the first response byte for byte (status, headers and
	 * body), marked as a replay, and that there is at least one replay.
	 */
	public DuplicateResponses assertReplaysIdentical() {
		ExchangedResponse first = first();
		List<ExchangedResponse> replays = replays();
		if (replays.isEmpty()) {
			throw new AssertionError("Expected at least one replay (" + this.replayedHeader + ": true), but got "
					+ describe(this.responses));
		}
		for (ExchangedResponse replay : replays) {
			HttpHeaders headers = new HttpHeaders();
			headers.putAll(replay.headers());
			headers.remove(this.replayedHeader);
			if (replay.status() != first.status() || !replay.hasBody(first.body())
					|| !sameHeaders(headers, first.headers())) {
				throw new AssertionError("Expected a replay to be the first response byte for byte\nfirst:  " + first
						+ "\nreplay: " + replay);
			}
		}
		return this;
	}

	private static boolean sameHeaders(HttpHeaders replay, HttpHeaders first) {
		if (!replay.headerNames().equals(first.headerNames())) {
			return false;
		}
		return first.headerNames().stream().allMatch((name) -> first.get(name).equals(replay.get(name)));
	}

	private boolean isReplay(ExchangedResponse response) {
		return response.hasHeader(this.replayedHeader, "true");
	}

	private static boolean isConflict(ExchangedResponse response) {
		return response.status() == HttpStatus.CONFLICT.value();
	}

	static String describe(List<ExchangedResponse> responses) {
		List<String> lines = new ArrayList<>();
		responses.forEach((response) -> lines.add("\n  " + response));
		return String.join("", lines);
	}

}
