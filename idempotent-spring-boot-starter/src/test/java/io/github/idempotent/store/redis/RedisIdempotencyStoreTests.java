package io.github.idempotent.store.redis;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.idempotent.store.AbstractIdempotencyStoreContractTest;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.testsupport.TestRedis;

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

}
