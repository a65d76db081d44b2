package smoketest.webmvc.boot41;

import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.idempotent.annotation.Idempotent;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

@SpringBootApplication
public class SmokeApplication {

	public static void main(String[] args) {
		SpringApplication.run(SmokeApplication.class, args);
	}

	@RestController
	public static class PaymentController {

		private final AtomicInteger executions = new AtomicInteger();

		/**
		 * Holds each payment until the test lets it finish, so that the storm's
		 * duplicates overlap it.
		 */
		private final CompletableFuture<Void> released = new CompletableFuture<>();

		@PostMapping("/payments")
		@Idempotent
		public Map<String, Object> pay(@RequestBody Map<String, Object> payment) throws Exception {
			this.executions.incrementAndGet();
			this.released.get(2, TimeUnit.MINUTES);
			return Map.of("id", UUID.randomUUID().toString(), "amount", payment.get("amount"));
		}

		public int executions() {
			return this.executions.get();
		}

		public void release() {
			this.released.complete(null);
		}

	}

}
