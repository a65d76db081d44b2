package io.github.idempotent.test;

import java.util.List;

import org.springframework.http.HttpStatus;

/**
 * A request and a different one sent after it with the same key. Sent by
 * {@link IdempotentRequest#keyReusedBy(Object)}.
 */
public final class KeyReuse {

	private final ExchangedResponse first;

	private final ExchangedResponse reuse;

	private final int executions;

	private final String replayedHeader;

	KeyReuse(ExchangedResponse first, ExchangedResponse reuse, int executions, String replayedHeader) {
		this.first = first;
		this.reuse = reuse;
		this.executions = executions;
		this.replayedHeader = replayedHeader;
	}

	/**
	 * The response to the first request.
	 */
	public ExchangedResponse first() {
		return this.first;
	}

	/**
	 * The response to the request that reused the key.
	 */
	public ExchangedResponse reuse() {
		return this.reuse;
	}

	/**
	 * Assert that the reuse was refused with {@code 422 Unprocessable Content}, not
	 * replayed, and did not run the method.
	 */
	public KeyReuse assertRejected() {
		if (this.reuse.status() != HttpStatus.UNPROCESSABLE_CONTENT.value()
				|| this.reuse.hasHeader(this.replayedHeader, "true")) {
			throw new AssertionError("Expected 422 for a key reused with another request, but got "
					+ DuplicateResponses.describe(List.of(this.first, this.reuse)));
		}
		if (this.executions != 1) {
			throw new AssertionError(
					"Expected the method to run for the first request only, but it ran " + this.executions + " times");
		}
		return this;
	}

}
