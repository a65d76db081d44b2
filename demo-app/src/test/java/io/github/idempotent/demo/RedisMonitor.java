package io.github.idempotent.demo;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * The commands a Redis server runs, as {@code MONITOR} shows them: what the demo sends to
 * Redis, seen from the server, with no hook in the application.
 */
final class RedisMonitor implements AutoCloseable {

	private final String host;

	private final int port;

	private final Socket socket;

	private final BufferedReader lines;

	private RedisMonitor(String host, int port) throws IOException {
		this.host = host;
		this.port = port;
		this.socket = connect(host, port);
		this.socket.getOutputStream().write("MONITOR\r\n".getBytes(StandardCharsets.US_ASCII));
		this.lines = new BufferedReader(new InputStreamReader(this.socket.getInputStream(), StandardCharsets.UTF_8));
		String reply = this.lines.readLine();
		if (!"+OK".equals(reply)) {
			throw new IllegalStateException("MONITOR answered " + reply);
		}
	}

	static RedisMonitor start(String host, int port) {
		try {
			return new RedisMonitor(host, port);
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * The commands mentioning {@code fragment} that the server ran since the previous
	 * call. A marker sent on a connection of its own, after everything the caller waited
	 * for, ends the list: MONITOR shows commands in the order the server runs them.
	 */
	List<String> commandsMentioning(String fragment) {
		String marker = "monitor-marker-" + UUID.randomUUID();
		try (Socket other = connect(this.host, this.port)) {
			OutputStream out = other.getOutputStream();
			out.write(("ECHO " + marker + "\r\n").getBytes(StandardCharsets.US_ASCII));
			out.flush();
			other.getInputStream().read(new byte[256]);
			List<String> commands = new ArrayList<>();
			for (String line = this.lines.readLine(); line != null; line = this.lines.readLine()) {
				if (line.contains(marker)) {
					return commands;
				}
				if (line.contains(fragment)) {
					commands.add(line);
				}
			}
			throw new IllegalStateException("MONITOR connection closed");
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static Socket connect(String host, int port) throws IOException {
		Socket socket = new Socket();
		socket.connect(new InetSocketAddress(host, port), 5000);
		socket.setSoTimeout(10_000);
		return socket;
	}

	@Override
	public void close() throws IOException {
		this.socket.close();
	}

}
