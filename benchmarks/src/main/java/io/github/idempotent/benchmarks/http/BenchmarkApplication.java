package io.github.idempotent.benchmarks.http;

import java.util.HashMap;
import java.util.Map;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * The app that {@code benchmarks/run-http.sh} loads: one Spring Boot app, the Redis
 * store, and three endpoints doing the same work ({@link PaymentController}).
 */
// The module has JDBC drivers for the record-size benchmark; these apps have no database.
@SpringBootApplication(excludeName = "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration")
public class BenchmarkApplication {

	public static void main(String[] args) {
		SpringApplication application = new SpringApplication(BenchmarkApplication.class);
		Map<String, Object> defaults = new HashMap<>();
		defaults.put("server.address", "127.0.0.1");
		defaults.put("idempotent.store.type", "redis");
		// Fresh-key runs write one record per request: keep them only as long as a run.
		defaults.put("idempotent.ttl", "10m");
		defaults.put("spring.data.redis.host", "127.0.0.1");
		defaults.put("spring.data.redis.timeout", "2s");
		defaults.put("spring.main.banner-mode", "off");
		defaults.put("logging.level.root", "warn");
		application.setDefaultProperties(defaults);
		application.run(args);
	}

}
