package io.github.idempotent.testsupport;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;

import org.jspecify.annotations.Nullable;
import redis.embedded.RedisServer;
import redis.embedded.core.ExecutableProvider;
import redis.embedded.core.RedisServerBuilder;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * The Redis the tests use: {@code IDEMPOTENT_REDIS_URL} if set, else 127.0.0.1:6379 if it
 * answers, else an embedded redis-server started once for the whole test run. Tests never
 * skip for want of a Redis.
 */
public final class TestRedis {

	private static String host;

	private static int port;

	private static String source;

	private TestRedis() {
	}

	public static synchronized String host() {
		start();
		return host;
	}

	public static synchronized int port() {
		start();
		return port;
	}

	/**
	 * Where the Redis of this run comes from, for test output.
	 */
	public static synchronized String source() {
		start();
		return source;
	}

	/**
	 * A new, started connection factory to the test Redis; the caller destroys it.
	 */
	public static LettuceConnectionFactory connectionFactory() {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(host(), port()));
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	private static void start() {
		if (host != null) {
			return;
		}
		String url = System.getenv("IDEMPOTENT_REDIS_URL");
		if (url != null && !url.isBlank()) {
			URI uri = URI.create(url);
			host = uri.getHost();
			port = (uri.getPort() > 0) ? uri.getPort() : 6379;
			source = "IDEMPOTENT_REDIS_URL " + url;
		}
		else if (answers("127.0.0.1", 6379)) {
			host = "127.0.0.1";
			port = 6379;
			source = "local Redis 127.0.0.1:6379";
		}
		else {
			EmbeddedRedis embedded = EmbeddedRedis.start();
			host = "127.0.0.1";
			port = embedded.port();
			source = "embedded Redis 127.0.0.1:" + port;
		}
		System.out.println("Tests use " + source);
	}

	static boolean answers(String host, int port) {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress(host, port), 500);
			socket.getOutputStream().write("PING\r\n".getBytes());
			byte[] reply = new byte[7];
			return socket.getInputStream().read(reply) > 0 && new String(reply).startsWith("+PONG");
		}
		catch (IOException ex) {
			return false;
		}
	}

	static int freePort() {
		try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * A redis-server of this test run's own, on a free loopback port: for tests that stop
	 * the server or reset its statistics, which must not touch a shared one.
	 */
	public static final class EmbeddedRedis implements AutoCloseable {

		private final RedisServer server;

		private final int port;

		private EmbeddedRedis(RedisServer server, int port) {
			this.server = server;
			this.port = port;
		}

		/**
		 * Starts the redis-server bundled with embedded-redis (Redis 6.2).
		 */
		public static EmbeddedRedis start() {
			return start(null);
		}

		/**
		 * Starts the redis-server installed on this machine ({@code redis-server} on the
		 * {@code PATH}), or the bundled one when there is none.
		 */
		public static EmbeddedRedis startInstalled() {
			try {
				return start(ExecutableProvider.newExecutableInPath("redis-server"));
			}
			catch (FileNotFoundException ex) {
				return start(null);
			}
		}

		private static EmbeddedRedis start(@Nullable ExecutableProvider executable) {
			int port = freePort();
			try {
				RedisServerBuilder builder = RedisServer.newRedisServer();
				if (executable != null) {
					builder.executableProvider(executable);
				}
				RedisServer server = builder.port(port)
					.bind("127.0.0.1")
					.setting("save \"\"")
					.setting("appendonly no")
					.build();
				server.start();
				EmbeddedRedis embedded = new EmbeddedRedis(server, port);
				Runtime.getRuntime().addShutdownHook(new Thread(embedded::close));
				return embedded;
			}
			catch (IOException ex) {
				throw new IllegalStateException("Could not start an embedded Redis on port " + port, ex);
			}
		}

		public int port() {
			return this.port;
		}

		public LettuceConnectionFactory connectionFactory() {
			LettuceConnectionFactory factory = new LettuceConnectionFactory(
					new RedisStandaloneConfiguration("127.0.0.1", this.port));
			factory.afterPropertiesSet();
			factory.start();
			return factory;
		}

		public void stop() {
			try {
				if (this.server.isActive()) {
					this.server.stop();
				}
			}
			catch (IOException ex) {
				throw new IllegalStateException(ex);
			}
		}

		@Override
		public void close() {
			stop();
		}

	}

}
