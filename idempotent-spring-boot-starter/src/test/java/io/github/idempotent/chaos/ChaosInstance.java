package io.github.idempotent.chaos;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.github.idempotent.testsupport.FaultProxy;

/**
 * One instance of {@link ChaosApp}: a separate JVM on the test's own classpath, on a
 * fixed HTTP port (kept across a restart, so clients find it again), reaching the store
 * through its own {@link FaultProxy}.
 */
final class ChaosInstance {

	final int index;

	final int httpPort;

	final FaultProxy proxy;

	private final List<String> properties;

	private final Path ledger;

	private final Path log;

	private volatile Process process;

	private volatile boolean up;

	ChaosInstance(int index, FaultProxy proxy, List<String> storeProperties, String web, Duration lease,
			Path directory) {
		this.index = index;
		this.httpPort = ChaosStore.freePort();
		this.proxy = proxy;
		this.ledger = directory.resolve("ledger-" + index + ".log");
		this.log = directory.resolve("instance-" + index + ".log");
		List<String> all = new ArrayList<>(storeProperties);
		all.addAll(List.of("server.port=" + this.httpPort, "spring.main.web-application-type=" + web,
				"chaos.web=" + web, "spring.main.banner-mode=off", "idempotent.lease=" + lease.toMillis() + "ms",
				"idempotent.ttl=1h", "idempotent.retry-after=1s", "chaos.instance=" + index,
				"chaos.ledger=" + this.ledger, "chaos.long-work=" + (lease.toMillis() * 3 / 2) + "ms",
				"management.endpoints.web.exposure.include=idempotency",
				"management.endpoint.idempotency.access=unrestricted",
				"spring.rabbitmq.listener.simple.auto-startup=false", "logging.level.root=warn",
				"logging.level.io.github.idempotent=info"));
		this.properties = all;
	}

	Path ledger() {
		return this.ledger;
	}

	void start() {
		List<String> command = new ArrayList<>();
		command.add(ProcessHandle.current().info().command().orElse("java"));
		command.addAll(List.of("-Xmx256m", "-Xss512k", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
				"-XX:CICompilerCount=1", "-Djava.security.egd=file:/dev/./urandom", "-cp",
				System.getProperty("java.class.path"), ChaosApp.class.getName()));
		for (String property : this.properties) {
			command.add("--" + property);
		}
		try {
			this.process = new ProcessBuilder(command).redirectErrorStream(true)
				.redirectOutput(ProcessBuilder.Redirect.appendTo(this.log.toFile()))
				.start();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/** Waits until the instance answers HTTP, at most {@code timeout}. */
	boolean awaitUp(HttpClient http, Duration timeout) {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (System.nanoTime() < deadline && this.process.isAlive()) {
			try {
				HttpResponse<Void> response = http
					.send(HttpRequest.newBuilder(URI.create(baseUrl() + "/actuator/idempotency/chaos/probe"))
						.timeout(Duration.ofSeconds(2))
						.build(), HttpResponse.BodyHandlers.discarding());
				if (response.statusCode() < 500) {
					this.up = true;
					return true;
				}
			}
			catch (IOException ex) {
				// not listening yet
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return false;
			}
			ChaosStore.sleep(200);
		}
		return false;
	}

	boolean isUp() {
		return this.up;
	}

	String baseUrl() {
		return "http://127.0.0.1:" + this.httpPort;
	}

	long pid() {
		return this.process.pid();
	}

	/** SIGKILL: a crash, with calls in flight. */
	void kill() {
		this.up = false;
		this.process.destroyForcibly();
		try {
			this.process.waitFor(10, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	void pause() {
		signal("STOP");
	}

	void resume() {
		signal("CONT");
	}

	private void signal(String signal) {
		try {
			Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid())).start();
			kill.waitFor(5, TimeUnit.SECONDS);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	String logTail() {
		try {
			List<String> lines = java.nio.file.Files.readAllLines(this.log);
			return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
		}
		catch (IOException ex) {
			return "(no log)";
		}
	}

	void stop() {
		if (this.process != null && this.process.isAlive()) {
			resume();
			this.process.destroy();
			try {
				if (!this.process.waitFor(10, TimeUnit.SECONDS)) {
					this.process.destroyForcibly();
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				this.process.destroyForcibly();
			}
		}
		this.proxy.close();
	}

}
