package io.github.idempotent.testsupport;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A loopback TCP proxy between the application and a real server (Redis, PostgreSQL) that
 * injects network faults: it delays, stalls, drops or cuts the traffic, in both
 * directions or only the replies. Tests point the client at {@link #port()} and switch
 * faults on and off while requests are in flight; nothing in the client is mocked.
 * <p>
 * Faults apply to bytes as they arrive, so a fault switched on mid-command takes effect
 * at the next chunk. {@link #stall()} holds bytes until {@link #pass()}; the held bytes
 * are then delivered in order, as a network that recovers would deliver them.
 */
public final class FaultProxy implements AutoCloseable {

	private final ServerSocket server;

	private final String targetHost;

	private volatile int targetPort;

	private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();

	private final Object lock = new Object();

	private volatile Mode requests = Mode.PASS;

	private volatile Mode replies = Mode.PASS;

	private volatile long delayMillis;

	private final AtomicReference<String> cutOnRequest = new AtomicReference<>();

	private final AtomicInteger requestsCut = new AtomicInteger();

	private volatile boolean closed;

	private FaultProxy(String targetHost, int targetPort) throws IOException {
		this.targetHost = targetHost;
		this.targetPort = targetPort;
		this.server = new ServerSocket();
		this.server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
		Thread acceptor = new Thread(this::accept, "fault-proxy-" + this.server.getLocalPort());
		acceptor.setDaemon(true);
		acceptor.start();
	}

	/**
	 * A proxy on a free loopback port in front of {@code targetHost:targetPort}, passing
	 * traffic through until told otherwise.
	 */
	public static FaultProxy start(String targetHost, int targetPort) {
		try {
			return new FaultProxy(targetHost, targetPort);
		}
		catch (IOException ex) {
			throw new IllegalStateException("Could not start a fault proxy", ex);
		}
	}

	public int port() {
		return this.server.getLocalPort();
	}

	/**
	 * Delivers everything again, including bytes held by a stall.
	 */
	public void pass() {
		set(Mode.PASS, Mode.PASS, 0);
	}

	/**
	 * Delays every chunk in both directions by {@code delay}.
	 */
	public void delay(Duration delay) {
		set(Mode.DELAY, Mode.DELAY, delay.toMillis());
	}

	/**
	 * Holds every byte in both directions until {@link #pass()}: a network that stops
	 * delivering without closing anything, or a server that stopped answering.
	 */
	public void stall() {
		set(Mode.STALL, Mode.STALL, 0);
	}

	/**
	 * Holds the server's replies until {@link #pass()}; requests still reach the server
	 * and are executed.
	 */
	public void stallReplies() {
		set(Mode.PASS, Mode.STALL, 0);
	}

	/**
	 * Discards the server's replies: requests are executed, their answers are lost. TCP
	 * never loses bytes inside a connection that stays up, so a client that matches
	 * replies to requests by order (Redis' protocol) reads later replies as answers to
	 * earlier requests; follow it with {@link #cut()} to model a lost answer.
	 */
	public void dropReplies() {
		set(Mode.PASS, Mode.DROP, 0);
	}

	/**
	 * Discards every byte in both directions; connections stay open.
	 */
	public void drop() {
		set(Mode.DROP, Mode.DROP, 0);
	}

	/**
	 * Ends an outage made with {@link #drop()} as a real one ends: delivers again and
	 * resets every connection. Bytes dropped inside a live connection are what TCP never
	 * does; a client that matches replies to requests by order (Redis' protocol) would
	 * otherwise match its later replies to the commands that were lost.
	 */
	public void passAndReset() {
		pass();
		cut();
	}

	/**
	 * Closes every open connection at once, as a crashed peer or a reset would; new
	 * connections are accepted as usual.
	 */
	public void cut() {
		for (Socket socket : this.sockets) {
			closeQuietly(socket);
		}
		this.sockets.clear();
	}

	/**
	 * Sends new connections to {@code port} on the same host from now on, as a virtual IP
	 * or a DNS name that moves to a promoted replica; open connections are left as they
	 * are.
	 */
	public void retarget(int port) {
		this.targetPort = port;
	}

	/**
	 * Cuts the connection that next sends a request containing {@code text} (in
	 * ISO-8859-1, as SQL and Redis commands are sent), before that request reaches the
	 * server: the client has written it and reads the end of the connection instead of an
	 * answer, exactly as when a connection breaks while a statement is on its way. Once;
	 * every other connection and request passes.
	 */
	public void cutOnRequest(String text) {
		this.cutOnRequest.set(text);
	}

	/**
	 * How many connections {@link #cutOnRequest} has cut.
	 */
	public int requestsCut() {
		return this.requestsCut.get();
	}

	private void set(Mode requests, Mode replies, long delayMillis) {
		synchronized (this.lock) {
			this.requests = requests;
			this.replies = replies;
			this.delayMillis = delayMillis;
			this.lock.notifyAll();
		}
	}

	@Override
	public void close() {
		this.closed = true;
		pass();
		closeQuietly(this.server);
		cut();
	}

	private void accept() {
		while (!this.closed) {
			try {
				Socket client = this.server.accept();
				Socket upstream = new Socket();
				try {
					upstream.connect(new InetSocketAddress(this.targetHost, this.targetPort), 5000);
				}
				catch (IOException ex) {
					closeQuietly(client);
					closeQuietly(upstream);
					continue;
				}
				client.setTcpNoDelay(true);
				upstream.setTcpNoDelay(true);
				this.sockets.add(client);
				this.sockets.add(upstream);
				pump(client, upstream, true);
				pump(upstream, client, false);
			}
			catch (IOException ex) {
				if (this.closed) {
					return;
				}
			}
		}
	}

	private void pump(Socket from, Socket to, boolean request) {
		Thread thread = new Thread(() -> {
			byte[] buffer = new byte[16 * 1024];
			try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
				int read;
				while ((read = in.read(buffer)) != -1) {
					if (request && cutsHere(buffer, read)) {
						break;
					}
					if (forward(request)) {
						out.write(buffer, 0, read);
						out.flush();
					}
				}
			}
			catch (IOException | InterruptedException ex) {
				// the connection was cut or closed
			}
			finally {
				closeQuietly(from);
				closeQuietly(to);
				this.sockets.remove(from);
				this.sockets.remove(to);
			}
		}, "fault-proxy-" + (request ? "requests" : "replies"));
		thread.setDaemon(true);
		thread.start();
	}

	private boolean cutsHere(byte[] buffer, int length) {
		String text = this.cutOnRequest.get();
		if (text != null && new String(buffer, 0, length, StandardCharsets.ISO_8859_1).contains(text)
				&& this.cutOnRequest.compareAndSet(text, null)) {
			this.requestsCut.incrementAndGet();
			return true;
		}
		return false;
	}

	/**
	 * Applies the fault of one direction to a chunk: waits out a stall or a delay.
	 * @return whether to deliver the chunk
	 */
	private boolean forward(boolean request) throws InterruptedException {
		long delay;
		synchronized (this.lock) {
			while (mode(request) == Mode.STALL && !this.closed) {
				this.lock.wait();
			}
			if (mode(request) == Mode.DROP) {
				return false;
			}
			delay = (mode(request) == Mode.DELAY) ? this.delayMillis : 0;
		}
		if (delay > 0) {
			Thread.sleep(delay);
		}
		return true;
	}

	private Mode mode(boolean request) {
		return request ? this.requests : this.replies;
	}

	private static void closeQuietly(AutoCloseable closeable) {
		try {
			closeable.close();
		}
		catch (SocketException ex) {
			// already closed
		}
		catch (Exception ex) {
			// nothing to do
		}
	}

	private enum Mode {

		PASS, DELAY, STALL, DROP

	}

}
