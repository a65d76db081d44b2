package io.github.idempotent.store.redis;

import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.UUID;

import io.lettuce.core.cluster.SlotHash;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import io.github.idempotent.autoconfigure.IdempotentAutoConfiguration;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.AbstractInspectableIdempotencyStoreContractTest;
import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.StoredResult;
import io.github.idempotent.store.cache.CachingIdempotencyStore;
import io.github.idempotent.testsupport.LocalRedisCluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * The store contract on a real three-node Redis Cluster of this test's own, configured
 * the way an application does it: {@code spring.data.redis.cluster.nodes}.
 */
class RedisClusterIdempotencyStoreTests extends AbstractInspectableIdempotencyStoreContractTest {

	private static LocalRedisCluster cluster;

	private static ConfigurableApplicationContext context;

	@BeforeAll
	static void startCluster() {
		cluster = LocalRedisCluster.start();
		try {
			context = new SpringApplicationBuilder(Application.class).web(WebApplicationType.NONE)
				.properties("spring.data.redis.cluster.nodes=" + cluster.nodes(), "idempotent.store.type=redis",
						"spring.main.banner-mode=off")
				.run();
		}
		catch (RuntimeException ex) {
			cluster.close();
			throw ex;
		}
	}

	@AfterAll
	static void stopCluster() {
		try {
			if (context != null) {
				SpringApplication.exit(context);
			}
		}
		finally {
			cluster.close();
		}
	}

	@Override
	protected IdempotencyStore createStore() {
		return context.getBean(RedisIdempotencyStore.class);
	}

	@Test
	void theLocalCacheNeverServesOnClusterWhereKeysCannotBeTrackedOnOneConnection() {
		CachingIdempotencyStore cache = context.getBean(CachingIdempotencyStore.class);
		assertThat(cache.getTracking()).isNotNull();
		assertThat(cache.getTracking().isSupported()).isFalse();
		assertThat(cache.isServing()).isFalse();
		RecordKey key = new RecordKey("idempotent-test:cluster-cache:" + UUID.randomUUID());
		Fingerprint fp = new Fingerprint("fp");
		String token = ((ClaimResult.Acquired) cache.claim(key, fp, Duration.ofSeconds(30))).token();
		assertThat(cache.complete(key, token, fp, new StoredResult(new byte[] { 1 }), Duration.ofMinutes(1))).isTrue();
		assertThat(cache.claim(key, fp, Duration.ofSeconds(30))).isInstanceOf(ClaimResult.Completed.class);
		assertThat(cache.cachedResults()).isZero();
	}

	@Test
	void keysInSlotsOfEveryNodeAreClaimedCompletedAndReplayed() {
		Fingerprint fp = new Fingerprint("fp");
		Set<Integer> slots = new HashSet<>();
		for (int i = 0; i < 30; i++) {
			RecordKey key = newKey();
			slots.add(SlotHash.getSlot(key.value()));
			String token = ((ClaimResult.Acquired) store().claim(key, fp, LEASE)).token();
			StoredResult result = new StoredResult(key.value().getBytes());
			assertThat(store().complete(key, token, fp, result, TTL)).isTrue();
			assertThat(store().claim(key, fp, LEASE)).isEqualTo(new ClaimResult.Completed(fp, result));
		}
		assertThat(slots).hasSizeGreaterThan(20);
		assertThat(cluster.keysPerNode()).as("keys held by each node")
			.allSatisfy((count) -> assertThat(count).isPositive());
	}

	@Test
	void waitForReplicasIsRefusedOnACluster() {
		RedisIdempotencyStore store = new RedisIdempotencyStore(context.getBean(RedisConnectionFactory.class));
		assertThatIllegalStateException().isThrownBy(() -> store.setWaitReplicas(1, Duration.ofMillis(100)))
			.withMessageContaining("not supported on Redis Cluster");
	}

	@ImportAutoConfiguration({ DataRedisAutoConfiguration.class, IdempotentAutoConfiguration.class })
	static class Application {

	}

}
