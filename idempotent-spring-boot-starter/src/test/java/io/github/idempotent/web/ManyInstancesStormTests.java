package io.github.idempotent.web;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.redisson.spring.data.connection.RedissonConnectionFactory;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.jdbc.JdbcIdempotencyStore;
import io.github.idempotent.store.redis.RedisIdempotencyStore;
import io.github.idempotent.testsupport.RequiresDatabase;
import io.github.idempotent.testsupport.RequiresDatabase.Database;
import io.github.idempotent.testsupport.TestDatabases;
import io.github.idempotent.testsupport.TestRedis;
import io.github.idempotent.testsupport.WithoutLettuce;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two instances of one application (two servers on random ports) on one shared store, and
 * a storm of concurrent requests with one key sent to both: the method runs exactly once
 * in all, and every other answer is 409 with Retry-After or a replay identical to the
 * first answer.
 */
class ManyInstancesStormTests {

	private static final int REQUESTS = 48;

	private static final Map<String, AtomicInteger> executions = new ConcurrentHashMap<>();

	@Test
	void oneExecutionAcrossTwoInstancesOnRedis() throws Exception {
		runStorm(RedisIdempotencyStore.class, "idempotent.store.type=redis",
				"spring.data.redis.host=" + TestRedis.host(), "spring.data.redis.port=" + TestRedis.port());
	}

	@Test
	@WithoutLettuce
	void oneExecutionAcrossTwoInstancesOnJedis() throws Exception {
		runStorm(RedisIdempotencyStore.class, "idempotent.store.type=redis", "spring.data.redis.client-type=jedis",
				"spring.data.redis.host=" + TestRedis.host(), "spring.data.redis.port=" + TestRedis.port());
	}

	@Test
	@WithoutLettuce
	void oneExecutionAcrossTwoInstancesOnRedisson() throws Exception {
		runStorm(RedisIdempotencyStore.class, "idempotent.store.type=redis", "storm.redisson=true");
	}

	@Test
	@RequiresDatabase(Database.POSTGRESQL)
	void oneExecutionAcrossTwoInstancesOnPostgreSql() throws Exception {
		String table = TestDatabases.uniqueTableName("idem_storm");
		try {
			runStorm(JdbcIdempotencyStore.class, "idempotent.store.type=jdbc",
					"spring.datasource.url=" + TestDatabases.postgresqlUrl(), "spring.datasource.username=postgres",
					"spring.datasource.password=", "idempotent.store.jdbc.table-name=" + table,
					"idempotent.store.jdbc.initialize-schema=always");
		}
		finally {
			try (var postgresql = TestDatabases.postgresql()) {
				new JdbcTemplate(postgresql).execute("DROP TABLE IF EXISTS " + table);
			}
		}
	}

	private void runStorm(Class<? extends IdempotencyStore> storeType, String... properties) throws Exception {
		ConfigurableApplicationContext first = start("first", properties);
		try {
			ConfigurableApplicationContext second = start("second", properties);
			try {
				// The store itself (on Redis, behind the local cache that is on by
				// default).
				assertThat(first.getBeanProvider(storeType).getIfUnique()).isNotNull();
				assertThat(second.getBeanProvider(storeType).getIfUnique()).isNotNull();
				storm(port(first), port(second));
			}
			finally {
				SpringApplication.exit(second);
			}
		}
		finally {
			SpringApplication.exit(first);
		}
	}

	private void storm(int firstPort, int secondPort) throws Exception {
		// Once the first call has completed, both instances replay it.
		Map<String, List<HttpResponse<String>>> answers = new HttpStorm("/transfers", firstPort, secondPort).run(1,
				REQUESTS, 8, "{\"from\":\"acc-1\",\"to\":\"acc-2\",\"amount\":125}");
		HttpStorm.assertRanOnceAndReplayed(answers, (key) -> executions.getOrDefault(key, new AtomicInteger()).get(),
				9);
		List<HttpResponse<String>> responses = answers.values().iterator().next();
		assertThat(responses.stream().filter((response) -> response.statusCode() / 100 == 2).findFirst())
			.hasValueSatisfying((original) -> assertThat(original.body()).contains("\"amount\":125"));
		System.out.println("Storm of " + REQUESTS + " on two instances: " + HttpStorm.statuses(answers));
	}

	private static ConfigurableApplicationContext start(String name, String... properties) {
		List<String> all = new ArrayList<>(List.of(properties));
		all.addAll(List.of("server.port=0", "server.address=127.0.0.1", "spring.main.banner-mode=off",
				"instance.name=" + name, "spring.application.name=" + name));
		return new SpringApplicationBuilder(TransferApplication.class).properties(all.toArray(String[]::new)).run();
	}

	private static int port(ConfigurableApplicationContext context) {
		return ((WebServerApplicationContext) context).getWebServer().getPort();
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import({ TransferController.class, RedissonFactory.class })
	static class TransferApplication {

		@Bean
		SecurityFilterChain securityFilterChain(HttpSecurity http) throws Exception {
			return http.csrf((csrf) -> csrf.disable())
				.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll())
				.build();
		}

	}

	/**
	 * Redisson's connection factory, as an application on {@code redisson-spring-data}
	 * declares it: Boot's Redis auto-configuration backs off.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnProperty("storm.redisson")
	static class RedissonFactory {

		@Bean(destroyMethod = "shutdown")
		RedissonClient redisson() {
			Config config = new Config();
			config.useSingleServer().setAddress("redis://" + TestRedis.host() + ":" + TestRedis.port());
			return Redisson.create(config);
		}

		@Bean
		RedissonConnectionFactory redissonConnectionFactory(RedissonClient redisson) {
			return new RedissonConnectionFactory(redisson);
		}

	}

	record TransferRequest(String from, String to, long amount) {
	}

	record Transfer(String id, String from, String to, long amount, String instance) {
	}

	@RestController
	static class TransferController {

		private final String instance;

		TransferController(@Value("${instance.name}") String instance) {
			this.instance = instance;
		}

		@PostMapping("/transfers")
		@Idempotent
		Transfer transfer(@RequestBody TransferRequest request, @RequestHeader("Idempotency-Key") String key)
				throws InterruptedException {
			executions.computeIfAbsent(key, (k) -> new AtomicInteger()).incrementAndGet();
			Thread.sleep(300);
			return new Transfer(UUID.randomUUID().toString(), request.from(), request.to(), request.amount(),
					this.instance);
		}

	}

}
