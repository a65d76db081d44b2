package io.github.idempotent.store.redis;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.IdempotencyKey;
import io.github.idempotent.store.AbstractIdempotencyStoreContractTest;
import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.StoredResult;
import io.github.idempotent.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

class RedisIdempotencyStoreTests extends AbstractIdempotencyStoreContractTest {

	private static LettuceConnectionFactory connectionFactory;

	@BeforeAll
	static void connect() {
		connectionFactory = TestRedis.connectionFactory();
	}

	@AfterAll
	static void disconnect() {
		connectionFactory.destroy();
	}

	@Override
	protected IdempotencyStore createStore() {
		return new RedisIdempotencyStore(connectionFactory);
	}

	@Test
	void theSameCompletionSentAgainByItsOwnerSucceedsAndChangesNothing() {
		// Lettuce sends a command again when its connection broke before the reply: the
		// first send may have completed the record already.
		Fingerprint fp = new Fingerprint("fp");
		IdempotencyKey key = newKey();
		String token = ((ClaimResult.Acquired) store().claim(key, fp, LEASE)).token();
		StoredResult result = new StoredResult(new byte[] { 1, 2, 3 });
		assertThat(store().complete(key, token, fp, result, TTL)).isTrue();
		assertThat(store().complete(key, token, fp, result, TTL)).isTrue();
		assertThat(store().complete(key, token, fp, new StoredResult(new byte[] { 4 }), TTL)).isFalse();
		assertThat(store().complete(key, "another-owner", fp, result, TTL)).isFalse();
		assertThat(store().claim(key, fp, LEASE)).isEqualTo(new ClaimResult.Completed(fp, result));
	}

}
