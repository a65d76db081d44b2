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

import io.github.idempotent.core.IdempotencyPolicy;
import io.github.idempotent.core.OutcomeRecorder;
import io.github.idempotent.core.OwnerHandle;
import io.github.idempotent.core.RecordedResponse;

/**
 * The response of one request, which passes everything through until the web layer starts
 * a guarded call of its handler ({@link #hold()}). From then on the status, the headers
 * set and the body are held back: once the request's last dispatch ends, {@link #finish}
 * stores them as written and only then sends them, so that a client that retries as soon
 * as it has the answer gets a replay. A replay writes a recorded response in place of
 * whatever the handler's stand-in would have written.
 * <p>
 * A handler that failed ends with its key released (or its error stored, for the types
 * its {@code cacheFor} lists). A handler that ran but whose response cannot be stored as
 * written (an error or redirect sent through the container, a body above
 * {@code idempotent.max-result-size}, a stream of events, an exception while the response
 * was written) ends with a record that says the call completed and its result is not
 * stored: a retry is told so, never served an empty success, never run again.
 * <p>
 * The body is held in a {@link HeldBody}; the headers the record keeps are chosen by
 * {@link RecordedHeaders}, as for WebFlux.
 */
final class RecordingServletResponse extends HttpServletResponseWrapper implements OutcomeRecorder {

	private enum Mode {

		PASS, RECORDING, STREAMING, REPLAYING, DONE

	}

	private final ReplayedHeaders replayedHeaders;

	private final HeldBody held;

	private volatile Mode mode = Mode.PASS;

	/** Names of the headers set while recording, lower case to the name as set. */
	private final Map<String, String> touched = new LinkedHashMap<>();

	private @Nullable RecordingOutputStream stream;

	private @Nullable PrintWriter writer;

	/** An error was sent: the container writes the rest. */
	private boolean errorSent;

	/** A redirect was written while recording: nothing more is written. */
	private boolean redirected;

	private @Nullable String unrecordable;

	private @Nullable OwnerHandle owner;

	private @Nullable Throwable failure;

	private @Nullable RecordedResponse replay;

	private final ReplayCustomizers customizers;

	RecordingServletResponse(HttpServletResponse response, ReplayedHeaders replayedHeaders, long limit,
			ReplayCustomizers customizers) {
		super(response);
		this.replayedHeaders = replayedHeaders;
		this.held = new HeldBody(limit);
		this.customizers = customizers;
	}

	/**
	 * Starts holding the response back: a guarded call of the request's handler is about
	 * to start, and whatever it writes is its outcome.
	 */
	synchronized void hold() {
		if (this.mode == Mode.PASS && !getResponse().isCommitted()) {
			this.mode = Mode.RECORDING;
			this.touched.clear();
		}
	}

	@Override
	public synchronized boolean records() {
		return this.mode == Mode.RECORDING || this.mode == Mode.STREAMING;
	}

	@Override
	public void recordLater(OwnerHandle owner, @Nullable Object value) {
		synchronized (this) {
			if (records()) {
				this.owner = owner;
				return;
			}
		}
		// Ended since the call started (an async request that timed out).
		owner.completeNotStoredAsync(getStatus(), "the request ended before its response was written");
	}

	/**
	 * The handler failed after its call returned (the future or {@code Mono} it returned
	 * failed): the call ends by releasing its key, unless its {@code cacheFor} stores the
	 * failure.
	 */
	synchronized void failed(Throwable failure) {
		this.failure = failure;
	}

	/**
	 * The handler ran but its response cannot be stored as written.
	 */
	synchronized void unrecordable(String why) {
		if (this.unrecordable == null) {
			this.unrecordable = why;
		}
	}

	/**
	 * The guarded call failed before it returned and has ended its hold itself: what it
	 * held is dropped, and the error handling writes the response.
	 */
	synchronized void passThrough() {
		if (this.mode == Mode.RECORDING || this.mode == Mode.STREAMING) {
			this.held.reset();
			this.mode = Mode.PASS;
		}
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
	 * the handler's call returned (a converter that failed, a 406)
	 */
	void finish(boolean exceptionResolved) throws IOException {
		Mode mode;
		byte[] body = null;
		OwnerHandle owner;
		Throwable failure;
		String unrecordable;
		synchronized (this) {
			mode = this.mode;
			this.mode = Mode.DONE;
			owner = this.owner;
			failure = this.failure;
			unrecordable = (this.unrecordable != null) ? this.unrecordable : unrecordable(mode, exceptionResolved);
			if (mode == Mode.RECORDING) {
				body = body();
			}
		}
		if (owner != null) {
			if (failure != null) {
				owner.release(failure);
			}
			else if (unrecordable == null) {
				owner.completeRecorded(new RecordedResponse(getStatus(), recordedHeaders(), body));
			}
			else {
				owner.completeNotStoredAsync(getStatus(), unrecordable).join();
			}
		}
		if (mode == Mode.RECORDING && !this.errorSent && !this.held.isOverflowed()) {
			writeBody(body);
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
	 * Why the response cannot be stored as written, or {@code null} when it can.
	 */
	private @Nullable String unrecordable(Mode mode, boolean exceptionResolved) {
		if (mode == Mode.STREAMING) {
			return "its response was a stream of events, sent as it came";
		}
		if (this.errorSent) {
			return "an error was sent through the servlet container";
		}
		if (this.held.isOverflowed()) {
			return "its response body was larger than idempotent.max-result-size";
		}
		if (exceptionResolved) {
			return "writing its response failed";
		}
		return null;
	}

	/**
	 * Ends a request that failed after its handler's call returned, with no response
	 * written by the error handling: the call ran, so its key is not freed.
	 */
	void abandon() {
		OwnerHandle owner;
		Throwable failure;
		synchronized (this) {
			owner = this.owner;
			failure = this.failure;
			this.owner = null;
			this.mode = Mode.DONE;
		}
		if (owner != null) {
			if (failure != null) {
				owner.release(failure);
			}
			else {
				owner.completeNotStoredAsync(getStatus(), "the request failed while its response was written");
			}
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

	/**
	 * A handler that sends a stream of events sends them as they come: what was held goes
	 * out, the rest passes through, and the response is not stored.
	 */
	@Override
	public void setContentType(@Nullable String type) {
		super.setContentType(type);
		if (type != null && type.toLowerCase(Locale.ROOT).startsWith("text/event-stream")) {
			streaming();
		}
	}

	private synchronized void streaming() {
		if (this.mode == Mode.RECORDING) {
			this.mode = Mode.STREAMING;
			if (this.stream == null) {
				// Nothing written yet: the handler writes to the container's own stream.
				return;
			}
			try {
				if (this.writer != null) {
					this.writer.flush();
				}
				this.held.spillTo(this.stream.target());
			}
			catch (IOException ex) {
				throw new java.io.UncheckedIOException(ex);
			}
		}
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
		sendRedirect(location, SC_FOUND, true);
	}

	@Override
	public void sendRedirect(String location, int sc) throws IOException {
		sendRedirect(location, sc, true);
	}

	@Override
	public void sendRedirect(String location, boolean clearBuffer) throws IOException {
		sendRedirect(location, SC_FOUND, clearBuffer);
	}

	/**
	 * A redirect of a guarded call is written here, as the container would write it
	 * (status, {@code Location}, no body), so that it is recorded and replayed; any other
	 * goes to the container.
	 */
	@Override
	public void sendRedirect(String location, int sc, boolean clearBuffer) throws IOException {
		synchronized (this) {
			if (this.mode == Mode.RECORDING) {
				if (clearBuffer) {
					this.held.reset();
				}
				setStatus(sc);
				setHeader("Location", location);
				this.redirected = true;
				return;
			}
		}
		super.sendRedirect(location, sc, clearBuffer);
	}

	@Override
	public void setHeader(String name, String value) {
		if (isHolding() && name.equalsIgnoreCase("Content-Length")) {
			return;
		}
		if (name.equalsIgnoreCase("Content-Type")) {
			setContentType(value);
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
			if (mode == Mode.RECORDING && RecordingServletResponse.this.redirected) {
				return;
			}
			if (mode == Mode.RECORDING && !held.isOverflowed()) {
				if (held.hold(b, off, len)) {
					return;
				}
				held.spillTo(target());
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
