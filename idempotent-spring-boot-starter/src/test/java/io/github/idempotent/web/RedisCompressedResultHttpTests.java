package io.github.idempotent.web;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Set;
import java.util.UUID;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.github.idempotent.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Compressed results on the Redis store.
 */
@SpringBootTest(classes = WebTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = "idempotent.store.type=redis")
class RedisCompressedResultHttpTests extends AbstractCompressedResultHttpTests {

	private static final String PREFIX = "compression-" + UUID.randomUUID().toString().substring(0, 8);

	/** A record's value: state byte, 8-byte owner token, 32-byte fingerprint, result. */
	private static final int RESULT_OFFSET = 1 + 8 + 32;

	@Autowired
	private RedisConnectionFactory connectionFactory;

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", TestRedis::host);
		registry.add("spring.data.redis.port", TestRedis::port);
		registry.add("idempotent.key-prefix", () -> PREFIX);
	}

	@Override
	byte[] storedResult(String clientKey) {
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			Set<byte[]> keys = connection.keyCommands()
				.keys((PREFIX + ":*:" + clientKey).getBytes(StandardCharsets.UTF_8));
			assertThat(keys).hasSize(1);
			byte[] record = connection.stringCommands().get(keys.iterator().next());
			assertThat(record).isNotNull();
			return Arrays.copyOfRange(record, RESULT_OFFSET, record.length);
		}
	}

}
