package io.github.idempotent.test;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;

import org.springframework.http.HttpHeaders;

/**
 * A response as the test client received it: status, headers and body bytes.
 */
public final class ExchangedResponse {

	private final int status;

	private final HttpHeaders headers;

	private final byte[] body;

	ExchangedResponse(int status, HttpHeaders headers, byte[] body) {
		this.status = status;
		this.headers = HttpHeaders.readOnlyHttpHeaders(headers);
		this.body = (body != null) ? body.clone() : new byte[0];
	}

	public int status() {
		return this.status;
	}

	public HttpHeaders headers() {
		return this.headers;
	}

	public byte[] body() {
		return this.body.clone();
	}

	public String bodyAsString() {
		return new String(this.body, StandardCharsets.UTF_8);
	}

	boolean hasBody(byte[] other) {
		return Arrays.equals(this.body, other);
	}

	boolean hasHeader(String name, String value) {
		return Objects.equals(this.headers.getFirst(name), value);
	}

	@Override
	public String toString() {
		return this.status + " " + this.headers + " " + bodyAsString();
	}

}
