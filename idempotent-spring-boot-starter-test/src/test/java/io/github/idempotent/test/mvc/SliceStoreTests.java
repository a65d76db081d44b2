package io.github.idempotent.test.mvc;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.webmvc.test.autoconfigure.WebMvcTest;
import org.springframework.context.annotation.Import;

import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.memory.InMemoryIdempotencyStore;
import io.github.idempotent.store.redis.RedisIdempotencyStore;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The store of a slice: the in-memory one unless the test names another.
 */
class SliceStoreTests {

	@Nested
	@WebMvcTest(controllers = PaymentController.class)
	@Import(OwnStoreConfiguration.class)
	class AStoreOfTheTest {

		@Autowired
		IdempotencyStore store;

		@Test
		void isKept() {
			assertThat(this.store).isSameAs(OwnStoreConfiguration.STORE);
		}

	}

	@Nested
	@WebMvcTest(controllers = PaymentController.class,
			properties = { "idempotent.test.store=application", "idempotent.store.type=redis" })
	@ImportAutoConfiguration(DataRedisAutoConfiguration.class)
	class TheApplicationsStore {

		@Autowired
		ObjectProvider<RedisIdempotencyStore> redisStore;

		@Autowired
		ObjectProvider<InMemoryIdempotencyStore> memoryStore;

		@Test
		void isChosenAsInTheApplication() {
			assertThat(this.redisStore.getIfAvailable()).isNotNull();
			assertThat(this.memoryStore.getIfAvailable()).isNull();
		}

	}

}
