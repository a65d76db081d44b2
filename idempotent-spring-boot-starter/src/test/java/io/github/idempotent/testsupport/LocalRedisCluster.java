package io.github.idempotent.testsupport;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.SlotHash;

/**
 * A Redis Cluster of three primaries on loopback, each a {@link RedisProcess}, joined
 * with CLUSTER MEET and ADDSLOTS through Lettuce (no redis-cli needed): slots are split
 * in three equal ranges.
 */
public final class LocalRedisCluster implements AutoCloseable {

	private final List<RedisProcess> nodes = new ArrayList<>();

	private LocalRedisCluster() {
	}

	public static LocalRedisCluster start() {
		return start(new String[0]);
	}

	/**
	 * Starts a cluster whose every node also has the given configuration lines.
	 */
	public static LocalRedisCluster start(String... config) {
		LocalRedisCluster cluster = new LocalRedisCluster();
		try {
			for (int i = 0; i < 3; i++) {
				int port = RedisProcess.freePort();
				List<String> lines = new ArrayList<>(List.of("cluster-enabled yes",
						"cluster-config-file nodes-" + port + ".conf", "cluster-node-timeout 5000"));
				lines.addAll(List.of(config));
				cluster.nodes.add(RedisProcess.start(port, false, lines.toArray(String[]::new)));
			}
			cluster.join();
			return cluster;
		}
		catch (RuntimeException ex) {
			cluster.close();
			throw ex;
		}
	}

	private void join() {
		int perNode = SlotHash.SLOT_COUNT / this.nodes.size();
		for (int i = 0; i < this.nodes.size(); i++) {
			int first = i * perNode;
			int last = (i == this.nodes.size() - 1) ? SlotHash.SLOT_COUNT - 1 : first + perNode - 1;
			int index = i;
			withNode(i, (redis) -> {
				redis.sync().clusterAddSlots(IntStream.rangeClosed(first, last).toArray());
				if (index > 0) {
					redis.sync().clusterMeet("127.0.0.1", this.nodes.get(0).port());
				}
				return null;
			});
		}
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
		while (!isReady()) {
			if (System.nanoTime() > deadline) {
				throw new IllegalStateException("Local Redis Cluster did not become ready: "
						+ withNode(0, (redis) -> redis.sync().clusterInfo()));
			}
			RedisProcess.sleep(100);
		}
	}

	private boolean isReady() {
		for (int i = 0; i < this.nodes.size(); i++) {
			String info = withNode(i, (redis) -> redis.sync().clusterInfo());
			if (!info.contains("cluster_state:ok") || !info.contains("cluster_known_nodes:" + this.nodes.size())) {
				return false;
			}
		}
		return true;
	}

	/**
	 * The nodes as {@code spring.data.redis.cluster.nodes} takes them.
	 */
	public String nodes() {
		return this.nodes.stream().map((node) -> "127.0.0.1:" + node.port()).collect(Collectors.joining(","));
	}

	/**
	 * Number of keys held by each node, in port order of {@link #nodes()}.
	 */
	public List<Long> keysPerNode() {
		List<Long> counts = new ArrayList<>();
		for (int i = 0; i < this.nodes.size(); i++) {
			counts.add(withNode(i, (redis) -> redis.sync().dbsize()));
		}
		return counts;
	}

	private <T> T withNode(int index, java.util.function.Function<StatefulRedisConnection<String, String>, T> action) {
		RedisClient client = RedisClient.create(RedisURI.create("127.0.0.1", this.nodes.get(index).port()));
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			return action.apply(connection);
		}
		finally {
			client.shutdown(0, 2, TimeUnit.SECONDS);
		}
	}

	@Override
	public void close() {
		this.nodes.forEach(RedisProcess::close);
		this.nodes.clear();
	}

}
