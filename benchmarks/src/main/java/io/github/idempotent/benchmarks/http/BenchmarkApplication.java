package io.github.idempotent.benchmarks.http;

import java.util.HashMap;
import java.util.Map;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.core.env.SimpleCommandLinePropertySource;

/**
 * The app that {@code benchmarks/run-http.sh} loads: one Spring Boot app, the Redis store
 * (or, with {@code --idempotent.store.type=jdbc} and {@code --spring.datasource.url}, the
 * JDBC store), three endpoints doing the same work ({@link PaymentController}) and the
 * store's reference endpoints ({@link RedisReferenceController},
 * {@link JdbcReferenceController}).
 */
@SpringBootApplication
public class BenchmarkApplication {

	public static void main(String[] args) {
		SpringApplication application = new SpringApplication(BenchmarkApplication.class);
		Map<String, Object> defaults = new HashMap<>();
		defaults.put("server.address", "127.0.0.1");
		// Fresh-key runs write one record per request: keep them only as long as a run.
		defaults.put("idempotent.ttl", "10m");
		defaults.put("spring.main.banner-mode", "off");
		defaults.put("logging.level.root", "warn");
		if ("jdbc".equals(new SimpleCommandLinePropertySource(args).getProperty("idempotent.store.type"))) {
			// No Redis client at all, so that nothing but the DataSource's pool (Boot's
			// Hikari defaults, shared by the store and the reference endpoints) talks to
			// a store.
			defaults.put("spring.autoconfigure.exclude",
					"org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration,"
							+ "org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration,"
							+ "org.springframework.boot.data.redis.autoconfigure.DataRedisRepositoriesAutoConfiguration");
			defaults.put("idempotent.store.jdbc.initialize-schema", "always");
			// Off for the JDBC store anyway (on by default only for Redis), said here so
			// that replays are measured on the network path whatever that default
			// becomes.
			defaults.put("idempotent.local-cache.enabled", "false");
		}
		else {
			defaults.put("idempotent.store.type", "redis");
			// The module has JDBC drivers for the record-size benchmark; the Redis app
			// has
			// no database.
			defaults.put("spring.autoconfigure.exclude",
					"org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration");
			defaults.put("spring.data.redis.host", "127.0.0.1");
			defaults.put("spring.data.redis.timeout", "2s");
		}
		application.setDefaultProperties(defaults);
		application.run(args);
	}

}
