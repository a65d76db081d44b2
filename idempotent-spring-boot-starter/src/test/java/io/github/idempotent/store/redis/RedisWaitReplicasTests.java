package io.github.idempotent.store.redis;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.StoredResult;
import io.github.idempotent.testsupport.FaultProxy;
import io.github.idempotent.testsupport.RedisProcess;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code wait-replicas} with a real replica whose replication link runs through a
 * {@link FaultProxy}: stalling the proxy makes the replica stop acknowledging, so a WAIT
 * stays pending on the primary until the test lets the link through again.
 */
class RedisWaitReplicasTests {

	private static final Fingerprint FP = new Fingerprint("fp");

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static RedisProcess primary;

	private static FaultProxy link;

	private static RedisProcess replica;

	private static RedisClient admin;

	private static StatefulRedisConnection<String, String> primaryAdmin;

	private LettuceConnectionFactory connectionFactory;

	private RedisIdempotencyStore store;

	@BeforeAll
	static void startPrimaryAndReplica() {
		primary = RedisProcess.start(RedisProcess.freePort(), false);
		link = FaultProxy.start("127.0.0.1", primary.port());
		replica = RedisProcess.start(RedisProcess.freePort(), false, "replicaof 127.0.0.1 " + link.port());
		admin = RedisClient.create(RedisURI.create("127.0.0.1", primary.port()));
		primaryAdmin = admin.connect();
		await("replica online", () -> primaryAdmin.sync().info("replication").contains("state=online"));
	}

	@AfterAll
	static void stop() {
		if (primaryAdmin != null) {
			primaryAdmin.close();
			admin.shutdown(0, 2, TimeUnit.SECONDS);
		}
		for (AutoCloseable closeable : new AutoCloseable[] { replica, link, primary }) {
			try {
				if (closeable != null) {
					closeable.close();
				}
			}
			catch (Exception ex) {
				// best effort
			}
		}
	}

	@AfterEach
	void heal() {
		link.pass();
		if (this.connectionFactory != null) {
			this.store.close();
			this.connectionFactory.destroy();
		}
	}

	@Test
	void aWaitForALaggingReplicaHoldsUpNeitherOtherClaimsNorRenewalsNorReplays() throws Exception {
		// Long enough that no WAIT ends by itself during the test: the test ends them.
		connect(Duration.ofSeconds(20));
		RecordKey running = key();
		String runningToken = ((ClaimResult.Acquired) this.store.claim(running, FP, LEASE)).token();
		RecordKey done = key();
		String doneToken = ((ClaimResult.Acquired) this.store.claim(done, FP, LEASE)).token();
		StoredResult result = new StoredResult(new byte[] { 7 });
		assertThat(this.store.complete(done, doneToken, FP, result, Duration.ofMinutes(5))).isTrue();

		link.stall();
		RecordKey first = key();
		CompletableFuture<ClaimResult> firstClaim = CompletableFuture
			.supplyAsync(() -> this.store.claim(first, FP, LEASE));
		await("the first claim waiting for the replica", () -> clientsBlockedInWait() == 1);
		RecordKey second = key();
		CompletableFuture<ClaimResult> secondClaim = CompletableFuture
			.supplyAsync(() -> this.store.claim(second, FP, LEASE));
		// WAIT blocks the connection it is sent on: two claims waiting at once need two.
		await("both claims waiting for the replica at once", () -> clientsBlockedInWait() == 2);

		// Nothing that needs no replica waits behind them: a renewal, a replay, a claim
		// of a key in progress.
		assertThat(this.store.renew(running, runningToken, FP, LEASE)).isTrue();
		assertThat(this.store.claim(done, FP, LEASE)).isEqualTo(new ClaimResult.Completed(FP, result));
		assertThat(this.store.claim(running, FP, LEASE)).isInstanceOf(ClaimResult.InProgress.class);
		assertThat(clientsBlockedInWait()).as("WAITs still pending").isEqualTo(2);
		assertThat(firstClaim).isNotDone();
		assertThat(secondClaim).isNotDone();

		link.pass();
		assertThat(firstClaim.get(10, TimeUnit.SECONDS)).isInstanceOf(ClaimResult.Acquired.class);
		assertThat(secondClaim.get(10, TimeUnit.SECONDS)).isInstanceOf(ClaimResult.Acquired.class);
	}

	private void connect(Duration waitTimeout) {
		this.connectionFactory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", primary.port()),
				LettuceClientConfiguration.builder().commandTimeout(waitTimeout.plusSeconds(10)).build());
		this.connectionFactory.afterPropertiesSet();
		this.connectionFactory.start();
		this.store = new RedisIdempotencyStore(this.connectionFactory);
		this.store.setWaitReplicas(1, waitTimeout);
	}

	/**
	 * Clients of the primary blocked in WAIT right now, as the primary itself reports
	 * them.
	 */
	private static long clientsBlockedInWait() {
		return primaryAdmin.sync()
			.clientList()
			.lines()
			.filter((line) -> line.contains(" cmd=wait") && line.matches(".* flags=[^ ]*b.*"))
			.count();
	}

	private static RecordKey key() {
		return new RecordKey("idempotent-test:wait:" + UUID.randomUUID());
	}

	private static void await(String what, BooleanSupplier condition) {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
		while (!condition.getAsBoolean()) {
			if (System.nanoTime() > deadline) {
				throw new AssertionError("Timed out waiting for " + what);
			}
			try {
				Thread.sleep(20);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new AssertionError(ex);
			}
		}
	}

}
