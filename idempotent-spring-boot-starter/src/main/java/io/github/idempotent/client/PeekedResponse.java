package io.github.idempotent.client;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.SequenceInputStream;

import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.ObjectReadContext;
import tools.jackson.core.json.JsonFactory;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.client.ClientHttpResponse;

/**
 * A response whose head was read for its problem type, given back in front of the rest.
 */
record PeekedResponse(ClientHttpResponse response, @Nullable String problemType,
		InputStream body) implements ClientHttpResponse {

	/** How much of a {@code 500} body is read for its problem type. */
	private static final int PROBLEM_PEEK_LIMIT = 8 * 1024;

	private static final JsonFactory JSON = new JsonFactory();

	static PeekedResponse of(ClientHttpResponse response) throws IOException {
		MediaType contentType = response.getHeaders().getContentType();
		if (contentType == null
				|| !("json".equals(contentType.getSubtype()) || "json".equals(contentType.getSubtypeSuffix()))) {
			return new PeekedResponse(response, null, response.getBody());
		}
		try {
			InputStream rest = response.getBody();
			byte[] head = rest.readNBytes(PROBLEM_PEEK_LIMIT);
			return new PeekedResponse(response, problemType(head),
					new SequenceInputStream(new ByteArrayInputStream(head), rest));
		}
		catch (IOException ex) {
			response.close();
			throw ex;
		}
	}

	/** The top-level {@code type} of a JSON object, as far as the head goes. */
	private static @Nullable String problemType(byte[] head) {
		try (JsonParser parser = JSON.createParser(ObjectReadContext.empty(), head)) {
			if (parser.nextToken() != JsonToken.START_OBJECT) {
				return null;
			}
			while (parser.nextToken() == JsonToken.PROPERTY_NAME) {
				String name = parser.currentName();
				JsonToken value = parser.nextToken();
				if ("type".equals(name)) {
					return (value == JsonToken.VALUE_STRING) ? parser.getString() : null;
				}
				parser.skipChildren();
			}
			return null;
		}
		catch (JacksonException ex) {
			return null;
		}
	}

	@Override
	public HttpStatusCode getStatusCode() throws IOException {
		return this.response.getStatusCode();
	}

	@Override
	public String getStatusText() throws IOException {
		return this.response.getStatusText();
	}

	@Override
	public HttpHeaders getHeaders() {
		return this.response.getHeaders();
	}

	@Override
	public InputStream getBody() {
		return this.body;
	}

	@Override
	public void close() {
		this.response.close();
	}

}
