package io.github.idempotent.testsupport;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import io.lettuce.core.KillArgs;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.SlotHash;

/**
 * A Redis Cluster of three primaries on loopback, each a {@link RedisProcess}, joined
 * with CLUSTER MEET and ADDSLOTS through Lettuce (no redis-cli needed): slots are split
 * in three equal ranges. {@link #startWithReplicas} adds one replica to each primary
 * (CLUSTER REPLICATE), so that a primary can fail over:
 * {@link #crashPrimaryAndAwaitFailover} kills one and waits for its replica's promotion,
 * {@link #replaceCrashed} starts a fresh node on the dead one's port as the new primary's
 * replica.
 */
public final class LocalRedisCluster implements AutoCloseable {

	private final List<RedisProcess> nodes = new ArrayList<>();

	private final List<String> config = new ArrayList<>();

	private LocalRedisCluster() {
	}

	public static LocalRedisCluster start() {
		return start(new String[0]);
	}

	/**
	 * Starts a cluster whose every node also has the given configuration lines.
	 */
	public static LocalRedisCluster start(String... config) {
		return start(0, 5000, config);
	}

	/**
	 * Starts three primaries with one replica each, {@code cluster-node-timeout}
	 * {@code nodeTimeoutMillis} (a primary that does not answer for that long is failed
	 * over) and {@code cluster-replica-validity-factor 0} (a replica may always be
	 * promoted), and waits until every replica is in sync.
	 */
	public static LocalRedisCluster startWithReplicas(int nodeTimeoutMillis, String... config) {
		return start(1, nodeTimeoutMillis, config);
	}

	private static LocalRedisCluster start(int replicas, int nodeTimeoutMillis, String... config) {
		LocalRedisCluster cluster = new LocalRedisCluster();
		cluster.config.add("cluster-node-timeout " + nodeTimeoutMillis);
		if (replicas > 0) {
			cluster.config.add("cluster-replica-validity-factor 0");
		}
		cluster.config.addAll(List.of(config));
		try {
			for (int i = 0; i < 3 * (1 + replicas); i++) {
				cluster.nodes.add(cluster.startNode(RedisProcess.freePort()));
			}
			cluster.join();
			if (replicas > 0) {
				for (int i = 3; i < cluster.nodes.size(); i++) {
					String primary = cluster.withNode(i % 3, (redis) -> redis.sync().clusterMyId());
					int replica = i;
					await("replica " + i + " knows its primary",
							() -> cluster.withNode(replica, (redis) -> redis.sync().clusterNodes().contains(primary)));
					cluster.withNode(i, (redis) -> redis.sync().clusterReplicate(primary));
				}
				cluster.awaitReplicasInSync();
			}
			return cluster;
		}
		catch (RuntimeException ex) {
			cluster.close();
			throw ex;
		}
	}

	private RedisProcess startNode(int port) {
		List<String> lines = new ArrayList<>(
				List.of("cluster-enabled yes", "cluster-config-file nodes-" + port + ".conf"));
		lines.addAll(this.config);
		return RedisProcess.start(port, false, lines.toArray(String[]::new));
	}

	private void join() {
		int perNode = SlotHash.SLOT_COUNT / 3;
		for (int i = 0; i < 3; i++) {
			int first = i * perNode;
			int last = (i == 2) ? SlotHash.SLOT_COUNT - 1 : first + perNode - 1;
			int index = i;
			withNode(i, (redis) -> {
				redis.sync().clusterAddSlots(IntStream.rangeClosed(first, last).toArray());
				if (index > 0) {
					redis.sync().clusterMeet("127.0.0.1", this.nodes.get(0).port());
				}
				return null;
			});
		}
		for (int i = 3; i < this.nodes.size(); i++) {
			withNode(i, (redis) -> redis.sync().clusterMeet("127.0.0.1", this.nodes.get(0).port()));
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
	 * The primaries now, as CLUSTER NODES of a live node names them.
	 */
	public List<Node> primaries() {
		return topology().stream().filter((node) -> node.primary() && !node.failed()).toList();
	}

	/**
	 * A node as CLUSTER NODES shows it.
	 *
	 * @param primaryId the id of its primary when it is a replica, else null
	 * @param slots its slot ranges, as {@code first-last} (primaries only)
	 */
	public record Node(String id, int port, boolean primary, boolean failed, String primaryId, List<String> slots) {

		/** Whether {@code slot} is in one of its ranges. */
		public boolean serves(int slot) {
			for (String range : this.slots) {
				String[] ends = range.split("-");
				int first = Integer.parseInt(ends[0]);
				int last = Integer.parseInt(ends[ends.length - 1]);
				if (slot >= first && slot <= last) {
					return true;
				}
			}
			return false;
		}

	}

	/** CLUSTER NODES of the first node that answers. */
	public List<Node> topology() {
		RuntimeException failure = null;
		for (int i = 0; i < this.nodes.size(); i++) {
			if (!this.nodes.get(i).isAlive()) {
				continue;
			}
			try {
				return parse(withNode(i, (redis) -> redis.sync().clusterNodes()));
			}
			catch (RuntimeException ex) {
				failure = ex;
			}
		}
		throw new IllegalStateException("No node of the cluster answers", failure);
	}

	private static List<Node> parse(String clusterNodes) {
		List<Node> parsed = new ArrayList<>();
		for (String line : clusterNodes.split("\n")) {
			String[] fields = line.trim().split(" ");
			if (fields.length < 8) {
				continue;
			}
			String address = fields[1].split("@")[0];
			int port = Integer.parseInt(address.substring(address.lastIndexOf(':') + 1));
			List<String> flags = List.of(fields[2].split(","));
			List<String> slots = new ArrayList<>();
			for (int f = 8; f < fields.length; f++) {
				if (!fields[f].startsWith("[")) {
					slots.add(fields[f]);
				}
			}
			parsed.add(new Node(fields[0], port, flags.contains("master"),
					flags.contains("fail") || flags.contains("fail?") || flags.contains("noaddr"),
					fields[3].equals("-") ? null : fields[3], slots));
		}
		return parsed;
	}

	/**
	 * Kills the primary on {@code port} (SIGKILL, as a crash would) and waits until its
	 * replica is a primary that serves its slots and every live node reports the cluster
	 * ok.
	 * @return the killed primary as it was, and the milliseconds from the kill to the
	 * cluster ok again
	 */
	public Failover crashPrimaryAndAwaitFailover(int port) {
		return crashPrimaryAndAwaitFailover(port, () -> {
		});
	}

	/**
	 * Cuts the replica of the primary on {@code port} off, so that the primary's next
	 * writes never reach it: the replica is stopped (SIGSTOP) and the primary drops its
	 * replication link (CLIENT KILL TYPE replica). A replica that only sleeps would still
	 * find them in its socket buffer when it wakes.
	 * @return what continues the replica (SIGCONT)
	 */
	public Runnable cutOffReplica(int port) {
		List<Node> now = topology();
		Node primary = now.stream()
			.filter((node) -> node.port() == port && node.primary())
			.findFirst()
			.orElseThrow(() -> new IllegalArgumentException("No primary on port " + port));
		Node replica = now.stream()
			.filter((node) -> primary.id().equals(node.primaryId()))
			.findFirst()
			.orElseThrow(() -> new IllegalStateException("The primary on port " + port + " has no replica"));
		RedisProcess stopped = node(replica.port());
		stopped.signal("STOP");
		onNode(port, (redis) -> redis.sync().clientKill(KillArgs.Builder.typeSlave()));
		return () -> stopped.signal("CONT");
	}

	/**
	 * As {@link #crashPrimaryAndAwaitFailover(int)}, running {@code afterKill} right
	 * after the kill.
	 */
	public Failover crashPrimaryAndAwaitFailover(int port, Runnable afterKill) {
		return crashPrimaryAndAwaitFailover(topology().stream()
			.filter((node) -> node.port() == port && node.primary())
			.findFirst()
			.orElseThrow(() -> new IllegalArgumentException("No primary on port " + port)), afterKill);
	}

	/**
	 * As {@link #crashPrimaryAndAwaitFailover(int, Runnable)}, for {@code killed} as
	 * {@link #topology()} named it before: no node is asked before the kill (a replica
	 * cut off does not answer).
	 */
	public Failover crashPrimaryAndAwaitFailover(Node killed, Runnable afterKill) {
		int port = killed.port();
		long start = System.nanoTime();
		node(port).kill();
		afterKill.run();
		await("failover of the primary on port " + port, () -> {
			List<Node> now = topology();
			boolean promoted = now.stream()
				.anyMatch((node) -> node.primary() && !node.failed() && node.port() != port
						&& node.slots().equals(killed.slots()));
			return promoted && isOk();
		});
		long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
		int promoted = topology().stream()
			.filter((node) -> node.primary() && node.slots().equals(killed.slots()))
			.mapToInt(Node::port)
			.findFirst()
			.orElse(-1);
		return new Failover(killed, promoted, millis);
	}

	/**
	 * A failover: the primary killed, the port of the replica promoted in its place, and
	 * how long from the kill until the cluster was ok again.
	 */
	public record Failover(Node killed, int promotedPort, long millis) {
	}

	/**
	 * Replaces the node killed by {@code failover}: every live node forgets it, a fresh
	 * node (empty, a new id) starts on its port, joins, becomes the replica of the
	 * promoted primary, and is in sync when this returns. A fresh node rather than the
	 * old one restarted with its nodes.conf: the old one would claim its former slots
	 * until gossip tells it otherwise, and a client could write to it meanwhile.
	 */
	public void replaceCrashed(Failover failover) {
		int port = failover.killed().port();
		int index = this.nodes.indexOf(node(port));
		this.nodes.get(index).close();
		for (int i = 0; i < this.nodes.size(); i++) {
			if (i != index) {
				withNode(i, (redis) -> redis.sync().clusterForget(failover.killed().id()));
			}
		}
		this.nodes.set(index, startNode(port));
		int promoted = failover.promotedPort();
		String primaryId = withNode(this.nodes.indexOf(node(promoted)), (redis) -> redis.sync().clusterMyId());
		withNode(index, (redis) -> redis.sync().clusterMeet("127.0.0.1", promoted));
		await("the new node on port " + port + " knows the primary",
				() -> withNode(index, (redis) -> redis.sync().clusterNodes().contains(primaryId)));
		withNode(index, (redis) -> redis.sync().clusterReplicate(primaryId));
		awaitReplicasInSync();
		await("the cluster ok with the new node", this::isOk);
	}

	/**
	 * Waits until every primary has a replica online and every node knows every other.
	 */
	public void awaitReplicasInSync() {
		await("replicas in sync", () -> {
			List<Node> now = topology();
			List<Node> primaries = now.stream().filter((node) -> node.primary() && !node.failed()).toList();
			for (Node primary : primaries) {
				String replication = withNode(this.nodes.indexOf(node(primary.port())),
						(redis) -> redis.sync().info("replication"));
				if (!replication.contains("connected_slaves:1") || !replication.contains("state=online")) {
					return false;
				}
			}
			return primaries.size() == 3 && isReady();
		});
	}

	private boolean isOk() {
		for (int i = 0; i < this.nodes.size(); i++) {
			if (this.nodes.get(i).isAlive()
					&& !withNode(i, (redis) -> redis.sync().clusterInfo()).contains("cluster_state:ok")) {
				return false;
			}
		}
		return true;
	}

	private RedisProcess node(int port) {
		return this.nodes.stream()
			.filter((node) -> node.port() == port)
			.findFirst()
			.orElseThrow(() -> new IllegalArgumentException("No node on port " + port));
	}

	/**
	 * Runs {@code action} on a connection to the node on {@code port}.
	 */
	public <T> T onNode(int port, java.util.function.Function<StatefulRedisConnection<String, String>, T> action) {
		return withNode(this.nodes.indexOf(node(port)), action);
	}

	private static void await(String what, java.util.function.BooleanSupplier condition) {
		RedisProcess.await(what, java.time.Duration.ofSeconds(30), 50, condition);
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
		// A short timeout: a stopped node accepts connections but answers nothing.
		RedisClient client = RedisClient.create(RedisURI.builder()
			.withHost("127.0.0.1")
			.withPort(this.nodes.get(index).port())
			.withTimeout(java.time.Duration.ofSeconds(2))
			.build());
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
