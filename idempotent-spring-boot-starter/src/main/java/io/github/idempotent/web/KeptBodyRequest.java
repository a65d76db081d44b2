package io.github.idempotent.web;

import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;

import jakarta.servlet.ReadListener;
import jakarta.servlet.RequestDispatcher;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import org.jspecify.annotations.Nullable;

import io.github.idempotent.core.IdempotencyRequestTooLargeException;

/**
 * A request whose body, once the guard has read it to fingerprint it, the handler reads
 * again from memory, and whose forwards its recording response sends as they are written.
 */
final class KeptBodyRequest extends HttpServletRequestWrapper {

	private final RecordingServletResponse recording;

	private byte @Nullable [] body;

	KeptBodyRequest(HttpServletRequest request, RecordingServletResponse recording) {
		super(request);
		this.recording = recording;
	}

	@Override
	public @Nullable RequestDispatcher getRequestDispatcher(String path) {
		RequestDispatcher dispatcher = super.getRequestDispatcher(path);
		return (dispatcher == null) ? null : new RequestDispatcher() {

			@Override
			public void forward(ServletRequest request, ServletResponse response) throws ServletException, IOException {
				KeptBodyRequest.this.recording.forwarding();
				dispatcher.forward(request, response);
			}

			@Override
			public void include(ServletRequest request, ServletResponse response) throws ServletException, IOException {
				dispatcher.include(request, response);
			}

		};
	}

	byte[] body(long limit) throws IOException {
		if (this.body == null) {
			if (getContentLengthLong() > limit) {
				throw new IdempotencyRequestTooLargeException(limit);
			}
			byte[] read = super.getInputStream().readNBytes((int) Math.min(limit + 1, Integer.MAX_VALUE - 8));
			if (read.length > limit) {
				throw new IdempotencyRequestTooLargeException(limit);
			}
			this.body = read;
		}
		return this.body;
	}

	@Override
	public ServletInputStream getInputStream() throws IOException {
		byte[] body = this.body;
		return (body != null) ? new KeptInputStream(body) : super.getInputStream();
	}

	@Override
	public BufferedReader getReader() throws IOException {
		if (this.body == null) {
			return super.getReader();
		}
		String encoding = getCharacterEncoding();
		return new BufferedReader(new InputStreamReader(getInputStream(),
				(encoding != null) ? Charset.forName(encoding) : StandardCharsets.ISO_8859_1));
	}

	private static final class KeptInputStream extends ServletInputStream {

		private final ByteArrayInputStream body;

		KeptInputStream(byte[] body) {
			this.body = new ByteArrayInputStream(body);
		}

		@Override
		public int read() {
			return this.body.read();
		}

		@Override
		public int read(byte[] b, int off, int len) {
			return this.body.read(b, off, len);
		}

		@Override
		public boolean isFinished() {
			return this.body.available() == 0;
		}

		@Override
		public boolean isReady() {
			return true;
		}

		@Override
		public void setReadListener(ReadListener listener) {
			throw new UnsupportedOperationException("The body was read to fingerprint it: read it blocking");
		}

	}

}
