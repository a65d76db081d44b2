package io.github.idempotent.benchmarks.webflux;

import java.util.HashMap;
import java.util.Map;

import reactor.core.publisher.Mono;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.benchmarks.http.PaymentRequest;
import io.github.idempotent.benchmarks.http.Receipt;

import static io.github.idempotent.benchmarks.http.PaymentController.receipt;

/**
 * The WebFlux counterpart of {@code BenchmarkApplication}, on Netty: the same work behind
 * {@code /bare}, {@code /first} and {@code /replay}, as {@code Mono} endpoints, and the
 * Redis references ({@link ReactiveRedisReferenceController}). Run with
 * {@code WEB=reactive benchmarks/run-http.sh}.
 */
// The module has JDBC drivers for the record-size benchmark; these apps have no database.
@SpringBootApplication(excludeName = "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration")
public class WebFluxBenchmarkApplication {

	public static void main(String[] args) {
		SpringApplication application = new SpringApplication(WebFluxBenchmarkApplication.class);
		application.setWebApplicationType(WebApplicationType.REACTIVE);
		Map<String, Object> defaults = new HashMap<>();
		defaults.put("server.address", "127.0.0.1");
		defaults.put("idempotent.store.type", "redis");
		defaults.put("idempotent.ttl", "10m");
		defaults.put("spring.data.redis.host", "127.0.0.1");
		defaults.put("spring.data.redis.timeout", "2s");
		defaults.put("spring.main.banner-mode", "off");
		defaults.put("logging.level.root", "warn");
		application.setDefaultProperties(defaults);
		application.run(args);
	}

	@RestController
	static class ReactivePaymentController {

		@PostMapping("/bare/payments")
		Mono<ResponseEntity<Receipt>> bare(@RequestBody PaymentRequest request) {
			return Mono.fromSupplier(() -> receipt(request));
		}

		@PostMapping("/first/payments")
		@Idempotent
		Mono<ResponseEntity<Receipt>> first(@RequestBody PaymentRequest request) {
			return Mono.fromSupplier(() -> receipt(request));
		}

		@PostMapping("/replay/payments")
		@Idempotent
		Mono<ResponseEntity<Receipt>> replay(@RequestBody PaymentRequest request) {
			return Mono.fromSupplier(() -> receipt(request));
		}

		// A body that holds its thread for 250 ms (a blocking call of the application's
		// own): eight at once show which threads the bodies share
		// (benchmarks/run-webflux-threads.sh).
		@PostMapping("/bare/slow-payments")
		Mono<ResponseEntity<Receipt>> bareSlow(@RequestBody PaymentRequest request) {
			return Mono.fromSupplier(() -> slowReceipt(request));
		}

		@PostMapping("/first/slow-payments")
		@Idempotent
		Mono<ResponseEntity<Receipt>> firstSlow(@RequestBody PaymentRequest request) {
			return Mono.fromSupplier(() -> slowReceipt(request));
		}

		private static ResponseEntity<Receipt> slowReceipt(PaymentRequest request) {
			try {
				Thread.sleep(250);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			return receipt(request);
		}

	}

}
