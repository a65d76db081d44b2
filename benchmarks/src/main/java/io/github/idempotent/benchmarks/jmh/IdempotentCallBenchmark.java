package io.github.idempotent.benchmarks.jmh;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import org.springframework.boot.Banner;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.core.IdempotentAnnotationAutoConfiguration;
import io.github.idempotent.autoconfigure.IdempotentAutoConfiguration;

/**
 * Per-call cost of {@code @Idempotent} with the in-memory store, next to the same method
 * called directly: the whole path of a call (proxy, key expression, scoped key,
 * fingerprint, claim, lease watchdog, encoding, complete; or claim and decoding for a
 * replay), with no network in the way. {@code result} is the size of the returned JSON:
 * {@code small} (187 bytes, one line item), {@code 400b} (three line items, the size of a
 * typical stored {@code ResponseEntity}), {@code 2k} (about 2 KB, 22 line items) or
 * {@code 10k} (10 267 bytes, 105 line items); results above the default threshold (1 KB,
 * so {@code 2k} and {@code 10k}) are deflated unless {@code compression} is false.
 * {@code 400b} was just above the threshold while it was 256 bytes; what deflating costs
 * by size is {@link ResultCompressionBenchmark}'s.
 * <p>
 * {@code firstCallFuture} and {@code replayFuture} do the same through a method that
 * returns a completed {@code CompletableFuture}: the asynchronous path, whose store
 * writes run on the store's threads (the in-memory store has no asynchronous calls).
 * <p>
 * Every first call uses a fresh key. Records are kept for 1 ms so that the store sweeps
 * them as the benchmark goes instead of filling the heap.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class IdempotentCallBenchmark {

	@Param({ "small", "400b", "2k", "10k" })
	public String result;

	/**
	 * {@code idempotent.result-compression.enabled}: results above the default threshold
	 * (1 KB) are stored deflated.
	 */
	@Param({ "true", "false" })
	public boolean compression;

	private ConfigurableApplicationContext context;

	private Payments direct;

	private Payments idempotent;

	private OrderRequest request;

	private long sequence;

	private String replayKey;

	@Setup(Level.Trial)
	public void setUp() {
		this.context = new SpringApplicationBuilder(BenchmarkConfiguration.class).web(WebApplicationType.NONE)
			.bannerMode(Banner.Mode.OFF)
			.logStartupInfo(false)
			.properties("idempotent.store.type=memory", "idempotent.default-scope=global", "idempotent.ttl=1ms",
					"logging.level.root=warn", "idempotent.result-compression.enabled=" + this.compression)
			.run();
		this.idempotent = this.context.getBean(Payments.class);
		this.direct = new Payments();
		int items = switch (this.result) {
			case "10k" -> 105;
			case "2k" -> 22;
			case "400b" -> 3;
			default -> 1;
		};
		this.request = new OrderRequest("customer-42", 1999, "EUR", items);
		this.replayKey = "replayed-key";
		this.idempotent.replayable(this.replayKey, this.request);
		this.idempotent.replayableLater(this.replayKey, this.request).join();
	}

	@TearDown(Level.Trial)
	public void tearDown() {
		this.context.close();
	}

	@Benchmark
	public Receipt direct() {
		return this.direct.pay(nextKey(), this.request);
	}

	@Benchmark
	public Receipt firstCall() {
		return this.idempotent.pay(nextKey(), this.request);
	}

	@Benchmark
	public Receipt replay() {
		return this.idempotent.replayable(this.replayKey, this.request);
	}

	@Benchmark
	public Receipt firstCallFuture() {
		return this.idempotent.payLater(nextKey(), this.request).join();
	}

	@Benchmark
	public Receipt replayFuture() {
		return this.idempotent.replayableLater(this.replayKey, this.request).join();
	}

	private String nextKey() {
		return Long.toString(++this.sequence);
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ IdempotentAutoConfiguration.class, IdempotentAnnotationAutoConfiguration.class })
	static class BenchmarkConfiguration {

		@Bean
		Payments payments() {
			return new Payments();
		}

	}

	public static class Payments {

		@Idempotent(key = "#key")
		public Receipt pay(String key, OrderRequest request) {
			return Receipt.of(key, request);
		}

		// Replays outlive the 1 ms of the first calls' records.
		@Idempotent(key = "#key", ttl = "1h")
		public Receipt replayable(String key, OrderRequest request) {
			return Receipt.of(key, request);
		}

		@Idempotent(key = "#key")
		public CompletableFuture<Receipt> payLater(String key, OrderRequest request) {
			return CompletableFuture.completedFuture(Receipt.of(key, request));
		}

		@Idempotent(key = "#key", ttl = "1h")
		public CompletableFuture<Receipt> replayableLater(String key, OrderRequest request) {
			return CompletableFuture.completedFuture(Receipt.of(key, request));
		}

	}

	public record OrderRequest(String customerId, long amountCents, String currency, int items) {
	}

	public record Receipt(String paymentId, String status, long amountCents, String currency, List<Line> lines) {

		static Receipt of(String key, OrderRequest request) {
			List<Line> lines = new ArrayList<>(request.items());
			for (int i = 0; i < request.items(); i++) {
				lines.add(new Line("sku-" + i, "Line item number " + i + " of the order", 1, request.amountCents()));
			}
			return new Receipt("pay-" + key, "CAPTURED", request.amountCents(), request.currency(), lines);
		}

	}

	public record Line(String sku, String description, int quantity, long priceCents) {
	}

}
