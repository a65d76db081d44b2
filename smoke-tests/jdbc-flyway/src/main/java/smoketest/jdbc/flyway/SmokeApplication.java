package smoketest.jdbc.flyway;

import java.math.BigDecimal;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.github.idempotent.annotation.Idempotent;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.jdbc.core.simple.JdbcClient;
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

		private final JdbcClient jdbc;

		/**
		 * Holds each payment until the test lets it finish, so that the storm's
		 * duplicates overlap it.
		 */
		private final CompletableFuture<Void> released = new CompletableFuture<>();

		public PaymentController(JdbcClient jdbc) {
			this.jdbc = jdbc;
		}

		@PostMapping("/payments")
		@Idempotent
		public Map<String, Object> pay(@RequestBody Map<String, Object> payment) throws Exception {
			UUID id = UUID.randomUUID();
			BigDecimal amount = new BigDecimal(payment.get("amount").toString());
			this.jdbc.sql("INSERT INTO payment (id, amount) VALUES (?, ?)").params(id, amount).update();
			this.released.get(2, TimeUnit.MINUTES);
			return Map.of("id", id.toString(), "amount", amount);
		}

		public void release() {
			this.released.complete(null);
		}

	}

}
