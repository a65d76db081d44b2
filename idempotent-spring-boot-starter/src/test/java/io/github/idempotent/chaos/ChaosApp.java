package io.github.idempotent.chaos;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;

import io.lettuce.core.internal.HostAndPort;
import io.lettuce.core.resource.DnsResolvers;
import io.lettuce.core.resource.MappingSocketAddressResolver;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.data.redis.autoconfigure.ClientResourcesBuilderCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.core.IdempotencyContext;

/**
 * The application the chaos campaign runs as N separate processes on one store. Its one
 * {@code @Idempotent} endpoint writes a line to its instance's ledger before it does
 * anything else (appended and forced to disk, so a SIGKILL right after it still leaves
 * it), works for a random time (now and then past the lease, which renewals must cover),
 * writes an end line, and answers with an id of this execution, so that the answers of
 * two executions differ. The ledger lives outside the store: the verdict does not trust
 * the thing it checks.
 */
@SpringBootApplication(excludeName = {
		// What the test classpath brings and the campaign does not use: each instance
		// starts faster without them, which matters on a loaded machine.
		"org.springframework.boot.security.autoconfigure.SecurityAutoConfiguration",
		"org.springframework.boot.security.autoconfigure.UserDetailsServiceAutoConfiguration",
		"org.springframework.boot.security.autoconfigure.actuate.web.servlet.ManagementWebSecurityAutoConfiguration",
		"org.springframework.boot.security.autoconfigure.web.servlet.SecurityFilterAutoConfiguration",
		"org.springframework.boot.security.autoconfigure.web.servlet.ServletWebSecurityAutoConfiguration",
		"org.springframework.boot.security.autoconfigure.ReactiveUserDetailsServiceAutoConfiguration",
		"org.springframework.boot.security.autoconfigure.actuate.web.reactive.ReactiveManagementWebSecurityAutoConfiguration",
		"org.springframework.boot.security.autoconfigure.web.reactive.ReactiveWebSecurityAutoConfiguration",
		"org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration",
		"org.springframework.boot.kafka.autoconfigure.metrics.KafkaMetricsAutoConfiguration",
		"org.springframework.boot.amqp.autoconfigure.RabbitAutoConfiguration",
		"org.springframework.boot.amqp.autoconfigure.health.RabbitHealthContributorAutoConfiguration",
		"org.springframework.boot.amqp.autoconfigure.metrics.RabbitMetricsAutoConfiguration",
		"org.springdoc.core.configuration.SpringDocConfiguration",
		"org.springdoc.webmvc.core.configuration.SpringDocWebMvcConfiguration",
		"org.springdoc.webmvc.core.configuration.MultipleOpenApiSupportConfiguration" })
public class ChaosApp {

	public static void main(String[] args) {
		SpringApplication.run(ChaosApp.class, args);
	}

	@Bean
	Ledger ledger(@Value("${chaos.ledger}") String file, @Value("${chaos.instance}") int instance) {
		return new Ledger(Path.of(file), instance);
	}

	/**
	 * With {@code chaos.node-map=<port>:<proxy port>} (the Cluster partition form), this
	 * instance's Lettuce connections to the node on {@code port} go through its proxy: a
	 * cluster names its nodes' own addresses, so the mapping is the only way to stand a
	 * proxy between one instance and one node.
	 */
	@Bean
	@ConditionalOnProperty("chaos.node-map")
	ClientResourcesBuilderCustomizer chaosNodeMap(@Value("${chaos.node-map}") String map) {
		int node = Integer.parseInt(map.substring(0, map.indexOf(':')));
		int proxy = Integer.parseInt(map.substring(map.indexOf(':') + 1));
		return (builder) -> builder.socketAddressResolver(MappingSocketAddressResolver.create(DnsResolvers.UNRESOLVED,
				(hostAndPort) -> (hostAndPort.getPort() == node) ? HostAndPort.of("127.0.0.1", proxy) : hostAndPort));
	}

	/** The blocking endpoint, on Spring MVC (the default). */
	@RestController
	@ConditionalOnProperty(name = "chaos.web", havingValue = "servlet", matchIfMissing = true)
	static class WorkController {

		private final Ledger ledger;

		private final long longWorkMillis;

		private final int longWorkOneIn;

		WorkController(Ledger ledger, @Value("${chaos.long-work:3s}") java.time.Duration longWork,
				@Value("${chaos.long-work-one-in:20}") int longWorkOneIn) {
			this.ledger = ledger;
			this.longWorkMillis = longWork.toMillis();
			this.longWorkOneIn = longWorkOneIn;
		}

		@PostMapping("/work")
		@Idempotent(name = "chaos")
		public Map<String, Object> work(@RequestHeader("Idempotency-Key") String key,
				@RequestBody Map<String, String> body) throws InterruptedException {
			// The attempt the library says this is: a re-run after a crash or a forced
			// delete must be told that it takes over (the checker holds it to that).
			String execution = this.ledger.start(key,
					IdempotencyContext.current().map(IdempotencyContext::getAttempt).orElse(0));
			ThreadLocalRandom random = ThreadLocalRandom.current();
			// Mostly short, one in twenty (chaos.long-work-one-in) longer than the lease:
			// renewals must keep it.
			long work = (random.nextInt(this.longWorkOneIn) == 0) ? this.longWorkMillis : random.nextLong(20, 400);
			Thread.sleep(work);
			this.ledger.end(key, execution);
			return Map.of("key", key, "execution", execution, "instance", this.ledger.instance);
		}

	}

	/**
	 * The same endpoint as a {@code Mono} handler on WebFlux
	 * ({@code chaos.web=reactive}): the ledger line is written when the starter
	 * subscribes (which is when the method's work runs), the work is a
	 * {@code Mono.delay}, and the attempt comes from the Reactor context.
	 */
	@RestController
	@ConditionalOnProperty(name = "chaos.web", havingValue = "reactive")
	static class ReactiveWorkController {

		private final Ledger ledger;

		private final long longWorkMillis;

		private final int longWorkOneIn;

		ReactiveWorkController(Ledger ledger, @Value("${chaos.long-work:3s}") java.time.Duration longWork,
				@Value("${chaos.long-work-one-in:20}") int longWorkOneIn) {
			this.ledger = ledger;
			this.longWorkMillis = longWork.toMillis();
			this.longWorkOneIn = longWorkOneIn;
		}

		@PostMapping("/work")
		@Idempotent(name = "chaos")
		public Mono<Map<String, Object>> work(@RequestHeader("Idempotency-Key") String key,
				@RequestBody Map<String, String> body) {
			return Mono.deferContextual((context) -> {
				int attempt = context.<IdempotencyContext>getOrEmpty(IdempotencyContext.REACTOR_CONTEXT_KEY)
					.map(IdempotencyContext::getAttempt)
					.orElse(0);
				String execution = this.ledger.start(key, attempt);
				ThreadLocalRandom random = ThreadLocalRandom.current();
				long work = (random.nextInt(this.longWorkOneIn) == 0) ? this.longWorkMillis : random.nextLong(20, 400);
				return Mono.delay(java.time.Duration.ofMillis(work)).map((tick) -> {
					this.ledger.end(key, execution);
					return Map.<String, Object>of("key", key, "execution", execution, "instance", this.ledger.instance);
				});
			});
		}

	}

	/**
	 * One line per event:
	 * {@code START <execution> <key> <instance> <pid> <epoch ms> <attempt>} and
	 * {@code END <execution> <key> <instance> <pid> <epoch ms> 0}, appended with O_APPEND
	 * and forced before the method goes on.
	 */
	static final class Ledger {

		private final FileChannel channel;

		private final int instance;

		private final long pid = ProcessHandle.current().pid();

		Ledger(Path file, int instance) {
			this.instance = instance;
			try {
				this.channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
						StandardOpenOption.APPEND);
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}

		String start(String key, int attempt) {
			String execution = this.instance + "-" + this.pid + "-" + UUID.randomUUID().toString().substring(0, 8);
			write("START", execution, key, attempt);
			return execution;
		}

		void end(String key, String execution) {
			write("END", execution, key, 0);
		}

		private synchronized void write(String event, String execution, String key, int attempt) {
			String line = event + " " + execution + " " + key + " " + this.instance + " " + this.pid + " "
					+ System.currentTimeMillis() + " " + attempt + "\n";
			try {
				ByteBuffer bytes = ByteBuffer.wrap(line.getBytes(StandardCharsets.UTF_8));
				while (bytes.hasRemaining()) {
					this.channel.write(bytes);
				}
				this.channel.force(false);
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}

	}

}
