package io.github.idempotent.testsupport;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import redis.embedded.core.ExecutableProvider;

/**
 * One redis-server process of a test's own, on a loopback port, in a temporary directory
 * that {@link #close()} deletes with the process. The binary is the one embedded-redis
 * ships (Redis 6.2, Linux and macOS), so no local installation is needed. For cluster and
 * sentinel tests, which must never touch a shared Redis.
 */
public final class RedisProcess implements AutoCloseable {

	private static File executable;

	private static Boolean debugCommandIsOff;

	private final int port;

	private final Path directory;

	private final Process process;

	private RedisProcess(int port, Path directory, Process process) {
		this.port = port;
		this.directory = directory;
		this.process = process;
	}

	/**
	 * Starts {@code redis-server} with the given configuration lines (besides port, bind,
	 * dir and persistence, which are set here) and waits until it answers PING.
	 * @param sentinel whether to run it as a sentinel
	 */
	public static RedisProcess start(int port, boolean sentinel, String... config) {
		Path directory = null;
		try {
			directory = Files.createTempDirectory("idempotent-redis-" + port + "-");
			List<String> lines = new ArrayList<>(List.of("port " + port, "bind 127.0.0.1", "dir " + directory,
					"save \"\"", "appendonly no", "daemonize no", "protected-mode no"));
			if (!sentinel && debugCommandIsOff()) {
				// Redis 7 refuses DEBUG (SLEEP, used to stall a replica) unless enabled.
				lines.add("enable-debug-command local");
			}
			lines.addAll(List.of(config));
			Path configFile = directory.resolve(sentinel ? "sentinel.conf" : "redis.conf");
			Files.write(configFile, lines, StandardCharsets.UTF_8);
			List<String> command = new ArrayList<>(List.of(executable().getAbsolutePath(), configFile.toString()));
			if (sentinel) {
				command.add("--sentinel");
			}
			Process process = new ProcessBuilder(command).directory(directory.toFile())
				.redirectErrorStream(true)
				.redirectOutput(directory.resolve("redis.log").toFile())
				.start();
			RedisProcess redis = new RedisProcess(port, directory, process);
			Runtime.getRuntime().addShutdownHook(new Thread(redis::close));
			redis.awaitAnswer();
			return redis;
		}
		catch (IOException ex) {
			if (directory != null) {
				delete(directory);
			}
			throw new UncheckedIOException("Could not start redis-server on port " + port, ex);
		}
	}

	private void awaitAnswer() {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
		while (!TestRedis.answers("127.0.0.1", this.port)) {
			if (!this.process.isAlive() || System.nanoTime() > deadline) {
				String log = log();
				close();
				throw new IllegalStateException("redis-server on port " + this.port + " did not start:\n" + log);
			}
			sleep(50);
		}
	}

	/**
	 * Whether the executable is Redis 7 or later, whose DEBUG command is off by default.
	 */
	private static synchronized boolean debugCommandIsOff() throws IOException {
		if (debugCommandIsOff == null) {
			Process version = new ProcessBuilder(executable().getAbsolutePath(), "--version").redirectErrorStream(true)
				.start();
			String output = new String(version.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
			Matcher matcher = Pattern.compile("v=(\\d+)\\.").matcher(output);
			debugCommandIsOff = matcher.find() && Integer.parseInt(matcher.group(1)) >= 7;
		}
		return debugCommandIsOff;
	}

	private static synchronized File executable() throws IOException {
		if (executable == null) {
			// The machine's redis-server where there is one (Redis 7 on CI), else the
			// bundled one (6.2). The store claims differently on each;
			// RedisBundledServerIdempotencyStoreTests covers the bundled one.
			try {
				executable = ExecutableProvider.newExecutableInPath("redis-server").get();
			}
			catch (IOException ex) {
				executable = ExecutableProvider.newJarResourceProvider().get();
				executable.setExecutable(true);
			}
		}
		return executable;
	}

	/**
	 * A free loopback port whose cluster bus port (port + 10000) is free too.
	 */
	public static int freePort() {
		for (int attempt = 0; attempt < 100; attempt++) {
			int port = ThreadLocalRandom.current().nextInt(20000, 50000);
			if (isFree(port) && isFree(port + 10000)) {
				return port;
			}
		}
		throw new IllegalStateException("No free loopback port pair found");
	}

	private static boolean isFree(int port) {
		try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
			return true;
		}
		catch (IOException ex) {
			return false;
		}
	}

	public int port() {
		return this.port;
	}

	/**
	 * Sends {@code signal} ({@code STOP}, {@code CONT}) to the process.
	 */
	public void signal(String signal) {
		try {
			Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(this.process.pid())).start();
			kill.waitFor(5, TimeUnit.SECONDS);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	public boolean isAlive() {
		return this.process.isAlive();
	}

	public String log() {
		try {
			return Files.readString(this.directory.resolve("redis.log"));
		}
		catch (IOException ex) {
			return "(no log: " + ex + ")";
		}
	}

	/**
	 * Kills the process (as a crash would) and waits for it to end.
	 */
	public void kill() {
		this.process.destroyForcibly();
		waitFor();
	}

	@Override
	public void close() {
		if (this.process.isAlive()) {
			this.process.destroy();
			if (!waitFor()) {
				this.process.destroyForcibly();
				waitFor();
			}
		}
		delete(this.directory);
	}

	private boolean waitFor() {
		try {
			return this.process.waitFor(5, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
	}

	/**
	 * Deletes a temporary directory and what it holds, as far as it can.
	 */
	public static void delete(Path directory) {
		if (!Files.exists(directory)) {
			return;
		}
		try (Stream<Path> paths = Files.walk(directory)) {
			paths.sorted(Comparator.reverseOrder()).forEach((path) -> path.toFile().delete());
		}
		catch (IOException ex) {
			// best effort: a temporary directory
		}
	}

	/**
	 * Polls {@code condition} every {@code pollMillis} until it holds, for at most
	 * {@code timeout}; a condition that throws has not held yet (a server starting,
	 * restarting or failing over).
	 */
	static void await(String what, java.time.Duration timeout, long pollMillis,
			java.util.function.BooleanSupplier condition) {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (true) {
			try {
				if (condition.getAsBoolean()) {
					return;
				}
			}
			catch (RuntimeException ex) {
				// not yet
			}
			if (System.nanoTime() > deadline) {
				throw new IllegalStateException("Timed out waiting for " + what);
			}
			sleep(pollMillis);
		}
	}

	/**
	 * Sleeps, turning an interrupt into a failure of the caller.
	 */
	public static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

}
