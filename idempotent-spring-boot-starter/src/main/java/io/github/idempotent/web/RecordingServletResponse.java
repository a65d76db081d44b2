package io.github.idempotent.web;

import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.Charset;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;
import org.springframework.web.method.HandlerMethod;

import io.github.idempotent.core.IdempotencyPolicy;
import io.github.idempotent.core.OutcomeRecorder;
import io.github.idempotent.core.OwnerHandle;
import io.github.idempotent.core.RecordedResponse;

/**
 * The response of one request, which passes everything through until its handler, an
 * {@code @Idempotent} method, returns. From then on the body is held back: once the
 * request's last dispatch ends, {@link #finish()} stores status, headers and body as
 * written and only then sends them, so that a client that retries as soon as it has the
 * answer gets a replay. A replay writes a recorded response in place of whatever the
 * handler's stand-in return value would have written.
 * <p>
 * A response that cannot be recorded as written (an error sent, a body above
 * {@code idempotent.max-result-size}, a server error, a failure while writing) stores the
 * method's return value through the codec instead, as every earlier version did.
 * <p>
 * The body is held in a {@link HeldBody}; the headers the record keeps are chosen by
 * {@link RecordedHeaders}, as for WebFlux.
 */
final class RecordingServletResponse extends HttpServletResponseWrapper implements OutcomeRecorder {

	private enum Mode {

		PASS, RECORDING, REPLAYING, DONE

	}

	private final ReplayedHeaders replayedHeaders;

	private final HeldBody held;

	private final boolean record;

	private volatile Mode mode = Mode.PASS;

	/** Names of the headers set while recording, lower case to the name as set. */
	private final Map<String, String> touched = new LinkedHashMap<>();

	private @Nullable RecordingOutputStream stream;

	private @Nullable PrintWriter writer;

	private boolean passedThrough;

	/** An error or a redirect was sent: the container writes the rest. */
	private boolean errorSent;

	private @Nullable OwnerHandle owner;

	private @Nullable Object value;

	private @Nullable RecordedResponse replay;

	private final ReplayCustomizers customizers;

	/** The handler whose call is recorded, for the status of a replayed plain value. */
	private volatile @Nullable HandlerMethod handler;

	RecordingServletResponse(HttpServletResponse response, ReplayedHeaders replayedHeaders, long limit, boolean record,
			ReplayCustomizers customizers) {
		super(response);
		this.replayedHeaders = replayedHeaders;
		this.held = new HeldBody(limit);
		this.record = record;
		this.customizers = customizers;
	}

	/**
	 * This recorder for a call of {@code handler}, the request's handler method.
	 */
	OutcomeRecorder handling(HandlerMethod handler) {
		this.handler = handler;
		return this;
	}

	/**
	 * The recorder for a call of a handler whose response is not recorded (a view, a
	 * primitive): it stores the return value through the codec, and shows its replays to
	 * the customizers.
	 */
	OutcomeRecorder replayingOnly(HandlerMethod handler) {
		this.handler = handler;
		return new ValueOnlyRecorder(this);
	}

	/**
	 * Not when recording is off, nor when the handler wrote the response itself, nor for
	 * a second handler call: what was written is not all there is to record.
	 */
	@Override
	public synchronized boolean records() {
		return this.record && this.mode == Mode.PASS && !this.passedThrough && !getResponse().isCommitted();
	}

	@Override
	public void recordLater(OwnerHandle owner, @Nullable Object value) {
		synchronized (this) {
			if (records()) {
				this.owner = owner;
				this.value = value;
				this.mode = Mode.RECORDING;
				return;
			}
		}
		// Ended since records() was asked (an async request that timed out).
		owner.completeAsync(value);
	}

	@Override
	public synchronized @Nullable Object replay(IdempotencyPolicy policy, String key, RecordedResponse response) {
		this.replay = response;
		this.mode = Mode.REPLAYING;
		// Status, type and headers first, so that the handler's stand-in writes nothing
		// that content negotiation would refuse; headers the request sets after this are
		// its own and win. The customizers' headers replace the stored ones.
		writeHead(response);
		setHeaders(this.customizers.recorded(policy.name(), key, response));
		return null;
	}

	@Override
	public @Nullable Object replayValue(IdempotencyPolicy policy, String key, @Nullable Object value) {
		HandlerMethod handler = this.handler;
		return this.customizers.value(policy.name(), key, value,
				(handler != null) ? HandlerMethods.status(handler) : 200, this::setHeaders);
	}

	private void setHeaders(HttpHeaders headers) {
		HttpServletResponse target = (HttpServletResponse) getResponse();
		if (target.isCommitted()) {
			return;
		}
		headers.forEach((name, values) -> setHeader(target, name, values));
	}

	private static void setHeader(HttpServletResponse target, String name, List<String> values) {
		for (int i = 0; i < values.size(); i++) {
			if (i == 0) {
				target.setHeader(name, values.get(i));
			}
			else {
				target.addHeader(name, values.get(i));
			}
		}
	}

	/**
	 * Ends the request: stores and sends a recorded response, or sends a replay. Called
	 * once the request's last dispatch has ended; the store is written outside the lock.
	 * @param exceptionResolved whether an exception was resolved into the response after
	 * the method returned (a converter that failed, a 406): not the method's outcome
	 */
	void finish(boolean exceptionResolved) throws IOException {
		Mode mode;
		byte[] body = null;
		boolean recordable = false;
		synchronized (this) {
			mode = this.mode;
			this.mode = Mode.DONE;
			if (mode == Mode.RECORDING) {
				body = body();
				recordable = isRecordable(exceptionResolved);
			}
		}
		if (mode == Mode.RECORDING) {
			if (recordable) {
				this.owner.completeRecorded(new RecordedResponse(getStatus(), recordedHeaders(), body));
			}
			else {
				this.owner.complete(this.value);
			}
			if (!this.errorSent && !this.held.isOverflowed()) {
				writeBody(body);
			}
		}
		else if (mode == Mode.REPLAYING) {
			// The status and the body's type again, over what the stand-in's handling
			// applied (a @ResponseStatus); the other headers were set by replay().
			HttpServletResponse target = (HttpServletResponse) getResponse();
			target.setStatus(this.replay.status());
			if (this.replay.contentType() != null) {
				target.setContentType(this.replay.contentType());
			}
			writeBody(this.replay.body());
		}
	}

	/**
	 * Whether the response can be stored as written; if not, the return value is stored
	 * instead: an error or a redirect was sent (the container writes the rest), the body
	 * passed the result size limit, an exception was resolved into the response, the
	 * status is 400 or more, or the container set a redirect's {@code Location} unseen.
	 */
	private boolean isRecordable(boolean exceptionResolved) {
		return !this.errorSent && !this.held.isOverflowed() && !exceptionResolved && getStatus() < 400
				&& !isUnseenRedirect();
	}

	/**
	 * A redirect whose {@code Location} the container set itself (Servlet 6.1's
	 * {@code sendRedirect} overloads reach it past this wrapper).
	 */
	private boolean isUnseenRedirect() {
		int status = getStatus();
		return status >= 300 && status < 400 && ((HttpServletResponse) getResponse()).getHeader("Location") != null
				&& !this.touched.containsKey("location");
	}

	/**
	 * Ends a request that failed after its handler returned: the method ran, so its
	 * return value is stored, and the failure is left to the error handling.
	 */
	void abandon() {
		Mode mode;
		synchronized (this) {
			mode = this.mode;
			this.mode = Mode.DONE;
		}
		if (mode == Mode.RECORDING) {
			this.owner.complete(this.value);
		}
	}

	AsyncListener abandonOnEnd() {
		return new AsyncListener() {

			@Override
			public void onComplete(AsyncEvent event) {
				abandon();
			}

			@Override
			public void onTimeout(AsyncEvent event) {
				abandon();
			}

			@Override
			public void onError(AsyncEvent event) {
				abandon();
			}

			@Override
			public void onStartAsync(AsyncEvent event) {
			}

		};
	}

	private byte[] body() {
		if (this.writer != null) {
			this.writer.flush();
		}
		return this.held.bytes();
	}

	private Map<String, List<String>> recordedHeaders() {
		HttpServletResponse response = (HttpServletResponse) getResponse();
		RecordedHeaders headers = new RecordedHeaders(this.replayedHeaders, response.getContentType());
		for (String name : this.touched.values()) {
			headers.add(name, response.getHeaders(name));
		}
		return headers.toMap();
	}

	private void writeHead(RecordedResponse response) {
		HttpServletResponse target = (HttpServletResponse) getResponse();
		target.setStatus(response.status());
		response.headers().forEach((name, values) -> {
			if (name.equalsIgnoreCase("Content-Type")) {
				target.setContentType(values.get(0));
				return;
			}
			setHeader(target, name, values);
		});
	}

	private void writeBody(byte[] body) throws IOException {
		HttpServletResponse target = (HttpServletResponse) getResponse();
		if (target.isCommitted()) {
			return;
		}
		target.setContentLength(body.length);
		if (body.length > 0) {
			target.getOutputStream().write(body);
		}
	}

	private boolean isHolding() {
		Mode mode = this.mode;
		return mode == Mode.RECORDING || mode == Mode.REPLAYING;
	}

	private void touch(String name) {
		if (this.mode == Mode.RECORDING) {
			this.touched.putIfAbsent(name.toLowerCase(Locale.ROOT), name);
		}
	}

	@Override
	public ServletOutputStream getOutputStream() throws IOException {
		if (this.writer != null) {
			throw new IllegalStateException("getWriter() has already been called for this response");
		}
		if (this.stream == null) {
			this.stream = new RecordingOutputStream();
		}
		return this.stream;
	}

	@Override
	public PrintWriter getWriter() throws IOException {
		if (this.writer != null) {
			return this.writer;
		}
		if (!isHolding()) {
			// The container's own writer, flushed by the container: a handler that is
			// not recorded writes as if this wrapper were not there.
			this.passedThrough = true;
			return super.getWriter();
		}
		if (this.stream != null) {
			throw new IllegalStateException("getOutputStream() has already been called for this response");
		}
		this.stream = new RecordingOutputStream();
		this.writer = new PrintWriter(new OutputStreamWriter(this.stream, Charset.forName(getCharacterEncoding())));
		return this.writer;
	}

	@Override
	public void flushBuffer() throws IOException {
		if (!isHolding()) {
			if (this.writer != null) {
				this.writer.flush();
			}
			super.flushBuffer();
		}
	}

	@Override
	public void resetBuffer() {
		this.held.reset();
		super.resetBuffer();
	}

	@Override
	public void reset() {
		resetBuffer();
		this.touched.clear();
		super.reset();
	}

	@Override
	public void setContentLength(int len) {
		if (!isHolding()) {
			super.setContentLength(len);
		}
	}

	@Override
	public void setContentLengthLong(long len) {
		if (!isHolding()) {
			super.setContentLengthLong(len);
		}
	}

	@Override
	public void sendError(int sc, String msg) throws IOException {
		this.errorSent = true;
		super.sendError(sc, msg);
	}

	@Override
	public void sendError(int sc) throws IOException {
		this.errorSent = true;
		super.sendError(sc);
	}

	@Override
	public void sendRedirect(String location) throws IOException {
		// The container sets Location itself, unseen here: the redirect is not recorded.
		this.errorSent = true;
		super.sendRedirect(location);
	}

	@Override
	public void setHeader(String name, String value) {
		if (isHolding() && name.equalsIgnoreCase("Content-Length")) {
			return;
		}
		touch(name);
		super.setHeader(name, value);
	}

	@Override
	public void addHeader(String name, String value) {
		if (isHolding() && name.equalsIgnoreCase("Content-Length")) {
			return;
		}
		touch(name);
		super.addHeader(name, value);
	}

	@Override
	public void setIntHeader(String name, int value) {
		if (isHolding() && name.equalsIgnoreCase("Content-Length")) {
			return;
		}
		touch(name);
		super.setIntHeader(name, value);
	}

	@Override
	public void addIntHeader(String name, int value) {
		if (isHolding() && name.equalsIgnoreCase("Content-Length")) {
			return;
		}
		touch(name);
		super.addIntHeader(name, value);
	}

	@Override
	public void setDateHeader(String name, long date) {
		touch(name);
		super.setDateHeader(name, date);
	}

	@Override
	public void addDateHeader(String name, long date) {
		touch(name);
		super.addDateHeader(name, date);
	}

	/**
	 * Writes through until the response is held back; then into the {@link HeldBody}
	 * (bounded by the result size limit, past which the held bytes are sent and the rest
	 * passes through, and the return value is stored instead); during a replay, nowhere.
	 */
	private final class RecordingOutputStream extends ServletOutputStream {

		private @Nullable ServletOutputStream target;

		private ServletOutputStream target() throws IOException {
			if (this.target == null) {
				this.target = getResponse().getOutputStream();
			}
			return this.target;
		}

		@Override
		public void write(int b) throws IOException {
			write(new byte[] { (byte) b }, 0, 1);
		}

		@Override
		public void write(byte[] b, int off, int len) throws IOException {
			Mode mode = RecordingServletResponse.this.mode;
			if (mode == Mode.REPLAYING) {
				return;
			}
			HeldBody held = RecordingServletResponse.this.held;
			if (mode == Mode.RECORDING && !held.isOverflowed()) {
				if (held.hold(b, off, len)) {
					return;
				}
				held.spillTo(target());
			}
			if (mode == Mode.PASS) {
				RecordingServletResponse.this.passedThrough = true;
			}
			target().write(b, off, len);
		}

		@Override
		public void flush() throws IOException {
			if (!isHolding() || RecordingServletResponse.this.held.isOverflowed()) {
				target().flush();
			}
		}

		@Override
		public void close() throws IOException {
			if (!isHolding() || RecordingServletResponse.this.held.isOverflowed()) {
				target().close();
			}
		}

		@Override
		public boolean isReady() {
			try {
				return isHolding() || target().isReady();
			}
			catch (IOException ex) {
				return false;
			}
		}

		@Override
		public void setWriteListener(WriteListener listener) {
			try {
				target().setWriteListener(listener);
			}
			catch (IOException ex) {
				throw new IllegalStateException(ex);
			}
		}

	}

}
