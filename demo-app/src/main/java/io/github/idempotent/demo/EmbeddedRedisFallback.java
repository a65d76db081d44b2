package io.github.idempotent.demo;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Map;

import org.apache.commons.logging.Log;

import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.logging.DeferredLogFactory;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;
import org.springframework.util.StringUtils;

import redis.embedded.RedisServer;

/**
 * Lets the demo start with nothing installed: when no Redis answers at
 * {@code spring.data.redis.host:port}, starts the redis-server binary shipped in
 * {@code embedded-redis} on that port (or a free one) and points the application at it.
 * The server lives as long as the JVM. Off with
 * {@code demo.redis.embedded-fallback=false}.
 */
public class EmbeddedRedisFallback implements EnvironmentPostProcessor, Ordered {

	private static RedisServer server;

	private static int serverPort;

	private final Log logger;

	public EmbeddedRedisFallback(DeferredLogFactory logFactory) {
		this.logger = logFactory.getLog(EmbeddedRedisFallback.class);
	}

	@Override
	public int getOrder() {
		// After the config data (application.yaml, profiles) is loaded.
		return Ordered.LOWEST_PRECEDENCE;
	}

	@Override
	public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
		if (!environment.getProperty("demo.redis.embedded-fallback", Boolean.class, false)
				|| StringUtils.hasText(environment.getProperty("spring.data.redis.url"))) {
			return;
		}
		String host = environment.getProperty("spring.data.redis.host", "localhost");
		int port = environment.getProperty("spring.data.redis.port", Integer.class, 6379);
		if (answersPing(host, port)) {
			this.logger.info("Using Redis at " + host + ":" + port);
			return;
		}
		int embeddedPort = start(port);
		this.logger.warn("No Redis answers at " + host + ":" + port + "; started an embedded Redis on 127.0.0.1:"
				+ embeddedPort + " for this run (its data is gone when the demo stops)");
		environment.getPropertySources()
			.addFirst(new MapPropertySource("embeddedRedis",
					Map.of("spring.data.redis.host", "127.0.0.1", "spring.data.redis.port", embeddedPort)));
	}

	private static synchronized int start(int preferredPort) {
		if (server != null) {
			return serverPort;
		}
		int port = isFree(preferredPort) ? preferredPort : freePort();
		try {
			RedisServer redis = RedisServer.newRedisServer()
				.port(port)
				.bind("127.0.0.1")
				.setting("save \"\"")
				.setting("appendonly no")
				.build();
			redis.start();
			Runtime.getRuntime().addShutdownHook(new Thread(() -> stop(redis), "embedded-redis-stop"));
			server = redis;
			serverPort = port;
			return port;
		}
		catch (IOException ex) {
			throw new IllegalStateException("No Redis answers and the embedded one could not start on port " + port
					+ ": start a Redis or set spring.data.redis.host/port", ex);
		}
	}

	private static void stop(RedisServer redis) {
		try {
			redis.stop();
		}
		catch (IOException ex) {
			// the JVM is exiting; the process dies with it
		}
	}

	static boolean answersPing(String host, int port) {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress(host, port), 500);
			socket.setSoTimeout(500);
			OutputStream out = socket.getOutputStream();
			out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
			out.flush();
			InputStream in = socket.getInputStream();
			byte[] reply = new byte[5];
			int read = in.readNBytes(reply, 0, 5);
			// +PONG, or -NOAUTH from a Redis that wants a password: either way, a Redis.
			return read > 0 && (reply[0] == '+' || reply[0] == '-');
		}
		catch (IOException ex) {
			return false;
		}
	}

	private static boolean isFree(int port) {
		try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
			return true;
		}
		catch (IOException ex) {
			return false;
		}
	}

	private static int freePort() {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

}
