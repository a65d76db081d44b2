package io.github.idempotent.web;

import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.io.Writer;
import java.io.UncheckedIOException;
import java.nio.charset.Charset;
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

import io.github.idempotent.core.IdempotencyExecutor.Hold;
import io.github.idempotent.core.IdempotencyExecutor.ResponseCapture;
import io.github.idempotent.core.IdempotencyExecutor.ResponseCapture.Replay;
import io.github.idempotent.core.RecordedResponse;

/**
 * Holds back the response of a guarded call from {@link #hold()} on, and at
 * {@link #finish} stores it before it sends it, so that a client retrying at once gets a
 * replay, or writes the replay the executor answered. A response that cannot be stored as
 * written ends as "completed, not stored" (docs/http.md, "Replays are exact").
 */
final class RecordingServletResponse extends HttpServletResponseWrapper implements AsyncListener {

	private enum Mode {

		PASS, RECORDING, STREAMING, DONE

	}

	private final WebContract contract;

	private final HeldBody held;

	private volatile Mode mode = Mode.PASS;

	private Map<String, List<String>> before = Map.of();

	private @Nullable RecordingOutputStream stream;

	private @Nullable PrintWriter writer;

	private boolean errorSent;

	private boolean redirected;

	// Forwarded by the handler: the container closes the response when the forward
	// returns, so what is written goes out as it comes and is recorded as it goes.
	private volatile boolean forwarded;

	private @Nullable String unrecordable;

	private @Nullable ResponseCapture capture;

	private @Nullable String sentKey;

	private volatile @Nullable Throwable failure;

	RecordingServletResponse(HttpServletResponse response, WebContract contract) {
		super(response);
		this.contract = contract;
		this.held = new HeldBody(contract.maxResultSize);
	}

	// What the executor answers into, or null when the response went out before the call
	// (a filter committed it): its return value is stored then.
	synchronized @Nullable ResponseCapture hold(@Nullable String sentKey) {
		if (this.mode == Mode.PASS && !getResponse().isCommitted()) {
			this.mode = Mode.RECORDING;
			this.before = headers();
			this.capture = new ResponseCapture();
			this.sentKey = sentKey;
		}
		return records() ? this.capture : null;
	}

	private boolean records() {
		return this.mode == Mode.RECORDING || this.mode == Mode.STREAMING;
	}

	synchronized void failed(Throwable failure) {
		this.failure = failure;
	}

	synchronized void unrecordable(String why) {
		if (this.unrecordable == null) {
			this.unrecordable = why;
		}
	}

	// The call failed before it returned: the error handling writes the response. Not a
	// replay's: what failed is its stand-in, and the replay is written all the same.
	synchronized void passThrough() {
		if (records() && !replaying()) {
			this.held.reset();
			this.mode = Mode.PASS;
		}
	}

	// A replay: what a stand-in for the method writes is dropped, the stored response
	// written at finish().
	private boolean replaying() {
		ResponseCapture capture = this.capture;
		return capture != null && capture.replay() != null;
	}

	// After the request's last dispatch; writes the store outside the lock.
	// exceptionResolved: an exception was resolved into the response after the handler's
	// call returned (a converter that failed, a 406).
	void finish(boolean exceptionResolved) throws IOException {
		Mode mode;
		byte[] body = null;
		Hold hold;
		Replay replay;
		String unrecordable;
		synchronized (this) {
			replay = (this.capture != null) ? this.capture.replay() : null;
			mode = this.mode;
			if (mode == Mode.RECORDING && replay == null) {
				if (this.writer != null) {
					// While still recording: what the writer buffers is the body's end.
					this.writer.flush();
				}
				body = this.held.toByteArray();
			}
			this.mode = Mode.DONE;
			// Taken here once: the end of an async request calls abandon() after this.
			hold = (this.capture != null) ? this.capture.take() : null;
			unrecordable = (this.unrecordable != null) ? this.unrecordable : unrecordable(mode, exceptionResolved);
		}
		if (hold != null) {
			// A replay here is a forwarded-to handler's: the request answered with it.
			RecordedResponse response = (replay != null) ? replay.response()
					: (unrecordable != null) ? null : new RecordedResponse(getStatus(),
							this.contract.replayedHeaders.recorded(getContentType(), this.before, headers()), body);
			hold.end(getStatus(), response, unrecordable, this.failure).join();
		}
		if (replay != null) {
			writeReplay(replay);
		}
		else if (mode == Mode.RECORDING && !this.errorSent && !this.held.isOverflowed() && !this.forwarded) {
			mark(hold != null);
			writeBody(body);
		}
	}

	// As soon as the guarded call's outcome is known: when it returns, so that what runs
	// after the handler sees the marks, or before its response goes out.
	void mark() {
		ResponseCapture capture = this.capture;
		mark(capture != null && capture.isHeld() && records());
	}

	// The guarded call returned. Within a forward the container sends the response as
	// the forward returns, before finish(): a replay is written now.
	void returned() throws IOException {
		mark();
		Replay replay = (this.forwarded && this.capture != null) ? this.capture.replay() : null;
		if (replay != null) {
			writeReplay(replay);
		}
	}

	// running: the call ran and its response is still held or streamed.
	private void mark(boolean running) {
		ResponseCapture capture = this.capture;
		if (!getResponse().isCommitted()) {
			this.contract.mark(capture != null && capture.isReplay(), running, this.failure, this.sentKey,
					super::setHeader);
		}
	}

	private void writeReplay(Replay replay) throws IOException {
		HttpServletResponse target = (HttpServletResponse) getResponse();
		if (target.isCommitted()) {
			return;
		}
		target.setStatus(replay.response().status());
		this.contract.writeReplayed(replay, this.sentKey, this.before, headers(), (name, values) -> {
			if (name.equalsIgnoreCase(HttpHeaders.CONTENT_TYPE)) {
				target.setContentType(values.get(0));
				return;
			}
			target.setHeader(name, values.get(0));
			values.stream().skip(1).forEach((value) -> target.addHeader(name, value));
		});
		writeBody(replay.response().body());
	}

	private @Nullable String unrecordable(Mode mode, boolean exceptionResolved) {
		if (mode == Mode.STREAMING) {
			return "its response was a stream of events, sent as it came";
		}
		if (this.errorSent) {
			return "an error was sent through the servlet container";
		}
		if (this.held.isOverflowed()) {
			return HeldBody.TOO_LARGE;
		}
		// PASS: what failed after the call returned was answered as it was written (an
		// error view), not held.
		if (exceptionResolved || mode == Mode.PASS) {
			return "writing its response failed";
		}
		return null;
	}

	// Failed after its handler's call returned: the call ran, so its key is not freed.
	void abandon() {
		Hold hold;
		synchronized (this) {
			hold = (this.capture != null) ? this.capture.take() : null;
			this.mode = Mode.DONE;
		}
		if (hold != null) {
			// Ended before the request is: a retry sent at once finds the key free.
			hold.end(getStatus(), null, "the request failed while its response was written", this.failure).join();
		}
	}

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

	private Map<String, List<String>> headers() {
		return ReplayedHeaders.snapshot(getHeaderNames(), this::getHeaders);
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
		return this.mode == Mode.RECORDING;
	}

	@Override
	public void setContentType(@Nullable String type) {
		super.setContentType(type);
		if (type != null && type.toLowerCase(Locale.ROOT).startsWith("text/event-stream")) {
			streaming();
		}
	}

	// What was written before a forward is discarded, as the container does.
	synchronized void forwarding() {
		if ((this.mode == Mode.PASS || this.mode == Mode.RECORDING) && this.writer == null && !replaying()) {
			this.held.reset();
			this.forwarded = true;
		}
	}

	private synchronized void streaming() {
		if (this.mode == Mode.RECORDING) {
			this.mode = Mode.STREAMING;
			mark();
			if (this.stream == null) {
				return;
			}
			try {
				if (this.writer != null) {
					this.writer.flush();
				}
				this.held.spillTo(this.stream.target());
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}
	}

	// A held response's length is the container's.
	private boolean passes(String name) {
		return !isHolding() || !name.equalsIgnoreCase(HttpHeaders.CONTENT_LENGTH);
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
			return super.getWriter();
		}
		if (this.stream != null) {
			throw new IllegalStateException("getOutputStream() has already been called for this response");
		}
		this.stream = new RecordingOutputStream();
		Writer recorded = new OutputStreamWriter(this.stream, Charset.forName(getCharacterEncoding()));
		this.writer = new PrintWriter(this.forwarded ? new CopyingWriter(super.getWriter(), recorded) : recorded);
		return this.writer;
	}

	@Override
	public void flushBuffer() throws IOException {
		if (!isHolding() || this.forwarded) {
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
		this.held.reset();
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

	// Written here as the container would, so that it is recorded and replayed.
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
		if (name.equalsIgnoreCase(HttpHeaders.CONTENT_TYPE)) {
			setContentType(value);
		}
		else if (passes(name)) {
			super.setHeader(name, value);
		}
	}

	@Override
	public void addHeader(String name, String value) {
		if (passes(name)) {
			super.addHeader(name, value);
		}
	}

	@Override
	public void setIntHeader(String name, int value) {
		if (passes(name)) {
			super.setIntHeader(name, value);
		}
	}

	@Override
	public void addIntHeader(String name, int value) {
		if (passes(name)) {
			super.addIntHeader(name, value);
		}
	}

	private final class RecordingOutputStream extends ServletOutputStream {

		private @Nullable ServletOutputStream target;

		private ServletOutputStream target() throws IOException {
			if (this.target == null) {
				mark();
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
			HeldBody held = RecordingServletResponse.this.held;
			if (mode == Mode.RECORDING && (RecordingServletResponse.this.redirected || replaying())) {
				return;
			}
			if (mode == Mode.RECORDING && RecordingServletResponse.this.forwarded) {
				// A copy, past the limit none; the container's writer, when one is in
				// use, has sent it.
				held.hold(b, off, len);
				if (RecordingServletResponse.this.writer == null) {
					target().write(b, off, len);
				}
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
			if (sendsAsItComes()) {
				target().flush();
			}
		}

		@Override
		public void close() throws IOException {
			if (sendsAsItComes()) {
				target().close();
			}
		}

		// Forwarded, what the container's writer sends when one is in use.
		private boolean sendsAsItComes() {
			return !isHolding() || (RecordingServletResponse.this.forwarded
					? RecordingServletResponse.this.writer == null : RecordingServletResponse.this.held.isOverflowed());
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

	/** A forwarded response's writer: the container's, and a copy to record. */
	private static final class CopyingWriter extends Writer {

		private final Writer target;

		private final Writer copy;

		CopyingWriter(Writer target, Writer copy) {
			this.target = target;
			this.copy = copy;
		}

		@Override
		public void write(char[] chars, int off, int len) throws IOException {
			this.target.write(chars, off, len);
			this.copy.write(chars, off, len);
		}

		@Override
		public void flush() throws IOException {
			this.target.flush();
			this.copy.flush();
		}

		@Override
		public void close() throws IOException {
			this.copy.flush();
		}

	}

}
