package io.github.idempotent.web;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Set;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStringCommands.SetOption;
import org.springframework.data.redis.core.types.Expiration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The stored result of a completed Redis record, read and replaced under a test's own key
 * prefix: the record's value is a state byte, the 8-byte owner token, the 32-byte
 * fingerprint, then the result.
 */
final class RedisStoredResults {

	static final int RESULT_OFFSET = 1 + 8 + 32;

	private final RedisConnectionFactory connectionFactory;

	private final String prefix;

	RedisStoredResults(RedisConnectionFactory connectionFactory, String prefix) {
		this.connectionFactory = connectionFactory;
		this.prefix = prefix;
	}

	/**
	 * The stored result of the one record of {@code clientKey}, marker byte first.
	 */
	byte[] read(String clientKey) {
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			byte[] record = record(connection, clientKey);
			return Arrays.copyOfRange(record, RESULT_OFFSET, record.length);
		}
	}

	/**
	 * Replaces the stored result of the record of {@code clientKey}, keeping the rest of
	 * the record and its expiry.
	 */
	void replace(String clientKey, byte[] result) {
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			byte[] changed = Arrays.copyOf(record(connection, clientKey), RESULT_OFFSET + result.length);
			System.arraycopy(result, 0, changed, RESULT_OFFSET, result.length);
			connection.stringCommands()
				.set(key(connection, clientKey), changed, Expiration.keepTtl(), SetOption.upsert());
		}
	}

	private byte[] key(RedisConnection connection, String clientKey) {
		Set<byte[]> keys = connection.keyCommands()
			.keys((this.prefix + ":*:" + clientKey).getBytes(StandardCharsets.UTF_8));
		assertThat(keys).hasSize(1);
		return keys.iterator().next();
	}

	private byte[] record(RedisConnection connection, String clientKey) {
		byte[] record = connection.stringCommands().get(key(connection, clientKey));
		assertThat(record).isNotNull();
		return record;
	}

}
