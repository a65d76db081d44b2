package io.github.idempotent.core;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;
import javax.sql.DataSource;

import org.junit.jupiter.api.Test;
import tools.jackson.core.StreamWriteFeature;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JsonMapperBuilderCustomizer;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DelegatingDataSource;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.autoconfigure.IdempotentAutoConfiguration;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.jdbc.JdbcIdempotencyStore;
import io.github.idempotent.store.redis.RedisIdempotencyStore;
import io.github.idempotent.testsupport.RequiresDatabase;
import io.github.idempotent.testsupport.RequiresDatabase.Database;
import io.github.idempotent.testsupport.TestDatabases;
import io.github.idempotent.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Numbers inside values that the return type leaves untyped ({@code Object},
 * {@code Map<String, Object>}, {@code List<Object>}, a record component of type
 * {@code Object}) replay exactly: a {@link BigDecimal} with its scale, integers beyond a
 * double's 53 bits, never rounded through a {@code double}. Through an
 * {@code @Idempotent} bean method on the Redis and the JDBC store.
 */
class UntypedNumberReplayTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class, DataRedisAutoConfiguration.class,
				DataSourceAutoConfiguration.class, IdempotentAutoConfiguration.class,
				IdempotentAnnotationAutoConfiguration.class))
		.withBean(Ledger.class);

	private final ApplicationContextRunner redis = this.runner.withPropertyValues(
			"spring.data.redis.host=" + TestRedis.host(), "spring.data.redis.port=" + TestRedis.port(),
			"idempotent.default-scope=global", "idempotent.store.type=redis");

	@Test
	void redisStoreReplaysUntypedNumbersExactly() {
		this.redis.run((context) -> {
			assertThat(context).hasSingleBean(RedisIdempotencyStore.class);
			assertReplaysExactly(context);
		});
	}

	@Test
	@RequiresDatabase(Database.POSTGRESQL)
	void postgreSqlStoreReplaysUntypedNumbersExactly() {
		String table = TestDatabases.uniqueTableName("untyped_numbers");
		try (var postgresql = TestDatabases.postgresql()) {
			try {
				this.runner.withBean(DataSource.class, () -> new DelegatingDataSource(postgresql))
					.withPropertyValues("idempotent.default-scope=global", "idempotent.store.type=jdbc",
							"idempotent.store.jdbc.table-name=" + table,
							"idempotent.store.jdbc.initialize-schema=always")
					.run((context) -> {
						assertThat(context.getBean(IdempotencyStore.class)).isInstanceOf(JdbcIdempotencyStore.class);
						assertReplaysExactly(context);
					});
			}
			finally {
				new JdbcTemplate(postgresql).execute("DROP TABLE IF EXISTS " + table);
			}
		}
	}

	@Test
	void aDoubleReturnedAsObjectReplaysAsTheBigDecimalOfItsDigits() {
		this.redis.run((context) -> {
			Ledger ledger = context.getBean(Ledger.class);
			String key = UUID.randomUUID().toString();
			assertThat(ledger.ratio(key)).isEqualTo(0.1);
			assertThat(ledger.ratio(key)).isEqualTo(new BigDecimal("0.1"));
			assertThat(ledger.count()).isOne();
		});
	}

	@Test
	void anApplicationThatWritesBigDecimalsPlainStillGetsThemBackExactly() {
		this.redis
			.withBean(JsonMapperBuilderCustomizer.class,
					() -> (builder) -> builder.enable(StreamWriteFeature.WRITE_BIGDECIMAL_AS_PLAIN))
			.run((context) -> {
				assertThat(context.getBean(JsonMapper.class).writeValueAsString(new BigDecimal("1E+3")))
					.isEqualTo("1000");
				Ledger ledger = context.getBean(Ledger.class);
				// 1E+3, written plain, would read back as the integer 1000.
				assertSameOnReplay(ledger::stripped,
						(stripped) -> assertThat(stripped).isEqualTo(new BigDecimal("1E+3")));
				assertReplaysExactly(context);
			});
	}

	private static void assertReplaysExactly(AssertableApplicationContext context) {
		Ledger ledger = context.getBean(Ledger.class);
		int before = ledger.count();
		assertSameOnReplay(ledger::total,
				(total) -> assertThat(total).isEqualTo(new BigDecimal("12345678901234567.89")));
		assertSameOnReplay(ledger::price, (price) -> assertThat(((BigDecimal) price).scale()).isEqualTo(2));
		assertSameOnReplay(ledger::entry, (entry) -> {
			assertThat(entry.get("sequence")).isEqualTo(9007199254740993L);
			assertThat(entry.get("amount")).isEqualTo(new BigDecimal("0.10"));
			assertThat(entry.get("nested")).isEqualTo(Map.of("fee", new BigDecimal("0.50")));
		});
		assertSameOnReplay(ledger::amounts, (amounts) -> assertThat(amounts).hasSize(4));
		assertSameOnReplay(ledger::posting, (posting) -> {
			assertThat(posting.amount()).isEqualTo(new BigDecimal("99.90"));
			assertThat(posting.rate()).isEqualTo(0.1);
		});
		assertThat(ledger.count() - before).isEqualTo(5);
	}

	private static <T> void assertSameOnReplay(Function<String, T> method, Consumer<T> replayed) {
		String key = UUID.randomUUID().toString();
		T first = method.apply(key);
		T replay = method.apply(key);
		assertThat(replay).isNotSameAs(first).isEqualTo(first);
		replayed.accept(replay);
	}

	record Posting(Object amount, double rate) {
	}

	static class Ledger {

		private final AtomicInteger executions = new AtomicInteger();

		public int count() {
			return this.executions.get();
		}

		@Idempotent(key = "#key")
		public Object total(String key) {
			this.executions.incrementAndGet();
			return new BigDecimal("12345678901234567.89");
		}

		@Idempotent(key = "#key")
		public Object price(String key) {
			this.executions.incrementAndGet();
			return new BigDecimal("10.00");
		}

		@Idempotent(key = "#key")
		public Map<String, Object> entry(String key) {
			this.executions.incrementAndGet();
			// 2^53 + 1: the first integer a double cannot hold.
			return Map.of("sequence", 9007199254740993L, "amount", new BigDecimal("0.10"), "nested",
					Map.of("fee", new BigDecimal("0.50")));
		}

		@Idempotent(key = "#key")
		public List<Object> amounts(String key) {
			this.executions.incrementAndGet();
			return List.of(new BigDecimal("10.00"), new BigDecimal("1E+3"), new BigDecimal("-0.00000010"),
					new BigInteger("123456789012345678901234567890"));
		}

		@Idempotent(key = "#key")
		public Posting posting(String key) {
			this.executions.incrementAndGet();
			return new Posting(new BigDecimal("99.90"), 0.1);
		}

		@Idempotent(key = "#key")
		public Object stripped(String key) {
			this.executions.incrementAndGet();
			return new BigDecimal("1000.00").stripTrailingZeros();
		}

		@Idempotent(key = "#key")
		public Object ratio(String key) {
			this.executions.incrementAndGet();
			return 0.1;
		}

	}

}
