package io.github.idempotent.web;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Set;
import java.util.UUID;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStringCommands.SetOption;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.types.Expiration;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.github.idempotent.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Damaged records on the Redis store: besides a damaged result, a value overwritten with
 * garbage, cut short, with a layout byte this version does not know, or of another Redis
 * type (WRONGTYPE). Records live under a prefix of their own, with an expiry.
 */
@SpringBootTest(classes = WebTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = "idempotent.store.type=redis")
class RedisDamagedRecordHttpTests extends AbstractDamagedRecordHttpTests {

	private static final String PREFIX = "damaged-" + UUID.randomUUID().toString().substring(0, 8);

	/** A record's value: state byte, 8-byte owner token, 32-byte fingerprint, result. */
	private static final int RESULT_OFFSET = 1 + 8 + 32;

	private static final Expiration EXPIRY = Expiration.seconds(600);

	@Autowired
	private RedisConnectionFactory connectionFactory;

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", TestRedis::host);
		registry.add("spring.data.redis.port", TestRedis::port);
		registry.add("idempotent.key-prefix", () -> PREFIX);
	}

	@AfterAll
	static void deleteRecords() {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(TestRedis.host(), TestRedis.port());
		factory.afterPropertiesSet();
		try (RedisConnection connection = factory.getConnection()) {
			Set<byte[]> keys = connection.keyCommands().keys(utf8(PREFIX + ":*"));
			if (keys != null && !keys.isEmpty()) {
				connection.keyCommands().del(keys.toArray(new byte[0][]));
			}
		}
		finally {
			factory.destroy();
		}
	}

	@Test
	void recordOverwrittenWithGarbageIsResultUnavailable(CapturedOutput output) throws Exception {
		String key = completedPayment();
		write(key, "garbage".getBytes(StandardCharsets.UTF_8));
		assertResultUnavailable(post("/payments", key, PAYMENT), "payments");
		assertOneWarning(output, key, "layout byte 0x67");
	}

	@Test
	void truncatedRecordIsResultUnavailable(CapturedOutput output) throws Exception {
		String key = completedPayment();
		write(key, Arrays.copyOf(record(key), 20));
		assertResultUnavailable(post("/payments", key, PAYMENT), "payments");
		assertOneWarning(output, key, "truncated");
	}

	@Test
	void completedRecordCutBeforeItsResultIsResultUnavailable(CapturedOutput output) throws Exception {
		String key = completedPayment();
		write(key, Arrays.copyOf(record(key), RESULT_OFFSET));
		assertResultUnavailable(post("/payments", key, PAYMENT), "payments");
		assertOneWarning(output, key, "stored result is empty");
	}

	@Test
	void unknownLayoutByteIsResultUnavailable(CapturedOutput output) throws Exception {
		String key = completedPayment();
		byte[] record = record(key);
		record[0] = 'Q';
		write(key, record);
		assertResultUnavailable(post("/payments", key, PAYMENT), "payments");
		assertOneWarning(output, key, "layout byte 0x51");
	}

	@Test
	void aRecordOfALaterFormatIsRetryLaterNeverDamagedNorRunAgain(CapturedOutput output) throws Exception {
		// Written with the Redis client as a newer version would: its first byte is one
		// that format 1 reserves for later formats.
		String key = completedPayment();
		byte[] record = record(key);
		record[0] = 0x02;
		write(key, record);
		assertWrittenByANewerVersion(post("/payments", key, PAYMENT), "payments");
		assertOneWarning(output, key, "written by a newer version");
	}

	@Test
	void hashUnderTheKeyIsResultUnavailable(CapturedOutput output) throws Exception {
		String key = completedPayment();
		byte[] redisKey = utf8(recordKey(key));
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			connection.keyCommands().del(redisKey);
			connection.hashCommands().hSet(redisKey, utf8("name"), utf8("not a record"));
			connection.keyCommands().expire(redisKey, 600);
		}
		assertResultUnavailable(post("/payments", key, PAYMENT), "payments");
		assertOneWarning(output, key, "Redis hash, not a string (WRONGTYPE)");
	}

	@Test
	void listUnderTheKeyIsResultUnavailable(CapturedOutput output) throws Exception {
		String key = completedPayment();
		byte[] redisKey = utf8(recordKey(key));
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			connection.keyCommands().del(redisKey);
			connection.listCommands().rPush(redisKey, utf8("not a record"));
			connection.keyCommands().expire(redisKey, 600);
		}
		assertResultUnavailable(post("/payments", key, PAYMENT), "payments");
		assertOneWarning(output, key, "WRONGTYPE");
	}

	@Override
	String recordKey(String clientKey) {
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			Set<byte[]> keys = connection.keyCommands().keys(utf8(PREFIX + ":*:" + clientKey));
			assertThat(keys).hasSize(1);
			return new String(keys.iterator().next(), StandardCharsets.UTF_8);
		}
	}

	private byte[] record(String clientKey) {
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			byte[] record = connection.stringCommands().get(utf8(recordKey(clientKey)));
			assertThat(record).isNotNull();
			return record;
		}
	}

	private void write(String clientKey, byte[] value) {
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			connection.stringCommands().set(utf8(recordKey(clientKey)), value, EXPIRY, SetOption.upsert());
		}
	}

	@Override
	byte[] storedResult(String clientKey) {
		byte[] record = record(clientKey);
		return Arrays.copyOfRange(record, RESULT_OFFSET, record.length);
	}

	@Override
	void storeResult(String clientKey, byte[] result) {
		byte[] record = Arrays.copyOf(record(clientKey), RESULT_OFFSET + result.length);
		System.arraycopy(result, 0, record, RESULT_OFFSET, result.length);
		write(clientKey, record);
	}

	private static byte[] utf8(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

}
