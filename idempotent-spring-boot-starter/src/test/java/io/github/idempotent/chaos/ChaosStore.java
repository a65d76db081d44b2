package io.github.idempotent.chaos;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.SlotHash;

import io.github.idempotent.testsupport.LocalRedisCluster;
import io.github.idempotent.testsupport.LocalRedisSentinel;
import io.github.idempotent.testsupport.RedisProcess;

/**
 * The store a campaign runs on: a server of the campaign's own (never the shared one on
 * the standard port, which other tests use), which it can restart, and which it reads
 * directly at the end to find records left in progress, without going through the
 * library.
 */
abstract class ChaosStore implements AutoCloseable {

	final Path directory;

	final int port;

	ChaosStore(String name) {
		this.port = freePort();
		try {
			this.directory = Files.createTempDirectory("idempotent-chaos-" + name + "-");
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	static ChaosStore start(String kind, long seed, int waitReplicas, boolean partition) {
		return switch (kind) {
			case "redis" -> new Redis();
			case "sentinel" -> new Sentinel(waitReplicas);
			case "cluster" -> new Cluster(seed, waitReplicas, partition);
			case "postgres" -> new Postgres(seed);
			case "mariadb" -> new MariaDb(seed);
			case "postgres-failover" -> new PostgresFailover(seed);
			default -> throw new IllegalArgumentException(
					"Unknown store " + kind + " (redis, sentinel, cluster, postgres, postgres-failover or mariadb)");
		};
	}

	/** Where the instances' proxies forward to. */
	int proxyTarget() {
		return this.port;
	}

	/** The fault {@link #restart()} is. */
	ChaosChecker.Kind restartKind() {
		return ChaosChecker.Kind.STORE_RESTART;
	}

	abstract String name();

	/** Application properties for an instance that reaches the store on {@code port}. */
	abstract List<String> applicationProperties(int proxyPort);

	/**
	 * Stops the server as a crash would and starts it again.
	 * @return what was done, or null when it could not be done
	 */
	abstract String restart();

	/**
	 * What to do before a {@link #restart()}, outside the fault's window (the Cluster
	 * cuts the primary's replica off when asked to make it lag).
	 * @return what was done, or null
	 */
	String beforeRestart() {
		return null;
	}

	/**
	 * What to do after a {@link #restart()} has been recorded, outside the fault's window
	 * (the Cluster replaces its dead node).
	 * @return what was done, or null
	 */
	String afterRestart() {
		return null;
	}

	/**
	 * Whether the instances' store connections pass through their proxies, so that cuts
	 * and stalls reach them.
	 */
	boolean proxyCarriesData() {
		return true;
	}

	/**
	 * Whether {@code failover} may have lost the writes of {@code key}: on a Cluster only
	 * the keys of the killed primary's slots.
	 */
	boolean failoverReaches(ChaosChecker.Fault failover, String key) {
		return true;
	}

	/** Takes note of an instance's proxy (the PostgreSQL failover moves it). */
	void attach(io.github.idempotent.testsupport.FaultProxy proxy) {
	}

	/**
	 * The replication that the checker holds a failover to: 0 when a failover may lose
	 * the writes of its last moments, else none may be lost.
	 */
	int waitReplicas(int configured) {
		return configured;
	}

	/** The setting the failover loss window is measured for, as the report names it. */
	String lossSetting(int configured) {
		return "wait-replicas=" + configured;
	}

	/** Whether {@link #memoryPressure} does something. */
	boolean hasMemoryLimit() {
		return false;
	}

	/**
	 * Bounds the store's memory just above what it uses ({@code on}), below it (
	 * {@code full}: every write that grows memory is refused), or not at all.
	 */
	void memoryPressure(boolean on, boolean full) {
	}

	/** Records in progress, read from the store itself. */
	abstract List<String> inProgress();

	static int freePort() {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	static boolean answers(int port) {
		try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
			return true;
		}
		catch (IOException ex) {
			return false;
		}
	}

	static void delete(Path directory) {
		RedisProcess.delete(directory);
	}

	static void sleep(long millis) {
		RedisProcess.sleep(millis);
	}

	/**
	 * redis-server 7 of the campaign's own, with {@code maxmemory-policy noeviction} and
	 * an append-only file synced on every write ({@code appendfsync always}): a restart
	 * must then lose nothing that was acknowledged, so it excuses no re-run.
	 */
	static final class Redis extends ChaosStore {

		private Process process;

		private long baseMemory;

		Redis() {
			super("redis");
			try {
				Files.write(this.directory.resolve("redis.conf"),
						List.of("port " + this.port, "bind 127.0.0.1", "dir " + this.directory, "save \"\"",
								"appendonly yes", "appendfsync always", "maxmemory-policy noeviction", "daemonize no",
								"protected-mode no"),
						StandardCharsets.UTF_8);
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
			launch();
		}

		private void launch() {
			try {
				this.process = new ProcessBuilder("redis-server", this.directory.resolve("redis.conf").toString())
					.directory(this.directory.toFile())
					.redirectErrorStream(true)
					.redirectOutput(ProcessBuilder.Redirect.appendTo(this.directory.resolve("redis.log").toFile()))
					.start();
			}
			catch (IOException ex) {
				throw new UncheckedIOException("redis-server must be on the PATH", ex);
			}
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
			while (!ping()) {
				if (!this.process.isAlive() || System.nanoTime() > deadline) {
					throw new IllegalStateException("redis-server on port " + this.port + " did not start");
				}
				sleep(20);
			}
		}

		private boolean ping() {
			if (!answers(this.port)) {
				return false;
			}
			try {
				return "PONG".equals(commands((redis) -> redis.ping()));
			}
			catch (RuntimeException ex) {
				return false;
			}
		}

		@Override
		String name() {
			return "Redis " + this.port;
		}

		@Override
		List<String> applicationProperties(int proxyPort) {
			return List.of("idempotent.store.type=redis", "spring.data.redis.host=127.0.0.1",
					"spring.data.redis.port=" + proxyPort, "spring.data.redis.timeout=3s",
					"spring.data.redis.connect-timeout=2s");
		}

		@Override
		String restart() {
			this.process.destroyForcibly();
			try {
				this.process.waitFor(10, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			launch();
			return "kill -9 and start again (AOF, appendfsync always)";
		}

		@Override
		boolean hasMemoryLimit() {
			return true;
		}

		@Override
		void memoryPressure(boolean on, boolean full) {
			commands((redis) -> {
				if (on) {
					String info = redis.info("memory");
					long used = info.lines()
						.filter((line) -> line.startsWith("used_memory:"))
						.mapToLong((line) -> Long.parseLong(line.substring("used_memory:".length()).trim()))
						.findFirst()
						.orElse(0);
					// Just above what is used: writes that grow memory are refused (OOM)
					// while the limit holds; nothing may be evicted.
					this.baseMemory = used;
					return redis.configSet("maxmemory", full ? "1" : Long.toString(used + 32 * 1024));
				}
				return redis.configSet("maxmemory", "0");
			});
		}

		@Override
		List<String> inProgress() {
			return redisInProgress(this.port);
		}

		private <T> T commands(java.util.function.Function<RedisCommands<String, String>, T> work) {
			return ChaosStore.commands(this.port, work);
		}

		@Override
		public void close() {
			this.process.destroyForcibly();
			try {
				this.process.waitFor(10, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			delete(this.directory);
		}

	}

	static List<String> redisInProgress(int port) {
		return commands(port, (redis) -> {
			List<String> found = new ArrayList<>();
			ScanCursor cursor = ScanCursor.INITIAL;
			for (int pages = 0; pages < 100_000 && !cursor.isFinished(); pages++) {
				KeyScanCursor<String> page = redis.scan(cursor, ScanArgs.Builder.matches("*chaos*").limit(500));
				for (String key : page.getKeys()) {
					if ("string".equals(redis.type(key))) {
						// Byte 0 of a record is its state: P or p in progress.
						String state = redis.getrange(key, 0, 0);
						if ("P".equals(state) || "p".equals(state)) {
							found.add(key);
						}
					}
				}
				cursor = page;
			}
			return found;
		});
	}

	static <T> T commands(int port, java.util.function.Function<RedisCommands<String, String>, T> work) {
		RedisClient client = RedisClient.create("redis://127.0.0.1:" + port);
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			return work.apply(connection.sync());
		}
		finally {
			client.shutdown(0, 1, TimeUnit.SECONDS);
		}
	}

	/**
	 * A primary, a replica and a sentinel of the campaign's own
	 * ({@link LocalRedisSentinel}, no persistence). The instances' proxies stand in front
	 * of the sentinel: the data connections go to the primary the sentinel names,
	 * directly, so proxy faults reach only the sentinel lookups. Its restart is a
	 * failover: the primary is killed and the replica promoted, once per run (no replica
	 * is left afterwards). Without {@code wait-replicas}, writes the replica had not
	 * received are lost, which the guide allows; with it, nothing acknowledged may be.
	 */
	static final class Sentinel extends ChaosStore {

		private final LocalRedisSentinel setup;

		private final int waitReplicas;

		private boolean failedOver;

		Sentinel(int waitReplicas) {
			super("sentinel");
			this.waitReplicas = waitReplicas;
			this.setup = LocalRedisSentinel.start();
		}

		@Override
		String name() {
			return "Redis Sentinel, wait-replicas=" + this.waitReplicas;
		}

		@Override
		int proxyTarget() {
			return Integer.parseInt(this.setup.sentinelNodes().substring(this.setup.sentinelNodes().indexOf(':') + 1));
		}

		@Override
		ChaosChecker.Kind restartKind() {
			return ChaosChecker.Kind.FAILOVER;
		}

		@Override
		List<String> applicationProperties(int proxyPort) {
			return List.of("idempotent.store.type=redis",
					"spring.data.redis.sentinel.master=" + LocalRedisSentinel.MASTER_NAME,
					"spring.data.redis.sentinel.nodes=127.0.0.1:" + proxyPort, "spring.data.redis.timeout=3s",
					"spring.data.redis.connect-timeout=2s", "idempotent.store.redis.wait-replicas=" + this.waitReplicas,
					"idempotent.store.redis.wait-timeout=500ms");
		}

		@Override
		String restart() {
			if (this.failedOver) {
				return null;
			}
			this.failedOver = true;
			long millis = this.setup.crashPrimaryAndAwaitFailover();
			return "primary killed, replica promoted after " + millis + " ms";
		}

		@Override
		List<String> inProgress() {
			return redisInProgress(this.setup.currentPrimaryPort());
		}

		@Override
		public void close() {
			this.setup.close();
			delete(this.directory);
		}

	}

	/**
	 * A Redis Cluster of the campaign's own ({@link LocalRedisCluster}, three primaries
	 * with one replica each, {@code cluster-node-timeout 1000}, no persistence). Its
	 * restart is a primary failover: a primary drawn from the seed is killed, its replica
	 * promoted; then a fresh node takes the dead one's port as the new primary's replica,
	 * so that every primary has a replica again and a run can fail over many times. The
	 * instances connect to the nodes directly: a cluster names its nodes' own addresses
	 * in its topology and redirects, so a proxy in front of a seed node would carry only
	 * the first lookup, and cuts and stalls are left out. Without {@code wait-replicas}
	 * (which the store refuses on Cluster at start-up) writes the replica had not
	 * received are lost, which the guide allows, for the keys of the killed primary's
	 * slots only.
	 */
	static final class Cluster extends ChaosStore {

		private static final Pattern SLOTS = Pattern.compile("slots ([0-9-]+(?:,[0-9-]+)*)");

		private final LocalRedisCluster setup;

		private final Random random;

		private LocalRedisCluster.Failover last;

		private LocalRedisCluster.Node victim;

		private Runnable continueReplica = () -> {
		};

		private String recordPrefix;

		private final int waitReplicas;

		/**
		 * Whether each instance reaches one node (the first primary) through its proxy: a
		 * partition between one instance and one node, the rest of the cluster reached
		 * directly.
		 */
		private final boolean partition;

		private final int partitioned;

		/**
		 * How long the killed primary's replica is cut off before the kill (stopped, its
		 * replication link dropped): 0 for none, else the writes of that time are lost.
		 */
		private final long replicaLagMillis = Long.getLong("chaos.replica-lag-ms", 0);

		Cluster(long seed, int waitReplicas, boolean partition) {
			super("cluster");
			this.partition = partition;
			// Passed on as it is: the store refuses wait-replicas on Cluster at start-up
			// (DedicatedConnections), and the campaign reports the instance's failure.
			this.waitReplicas = waitReplicas;
			this.random = new Random(seed ^ 0x5eedc1L);
			this.setup = LocalRedisCluster.startWithReplicas(1000);
			this.partitioned = this.setup.primaries()
				.stream()
				.mapToInt(LocalRedisCluster.Node::port)
				.sorted()
				.findFirst()
				.getAsInt();
		}

		@Override
		String name() {
			return "Redis Cluster (three primaries, one replica each), wait-replicas=" + this.waitReplicas;
		}

		@Override
		int proxyTarget() {
			return this.partitioned;
		}

		@Override
		ChaosChecker.Kind restartKind() {
			return ChaosChecker.Kind.CLUSTER_FAILOVER;
		}

		@Override
		boolean proxyCarriesData() {
			return this.partition;
		}

		@Override
		List<String> applicationProperties(int proxyPort) {
			// Lettuce's topology refresh is off unless asked for: without it an instance
			// would go on sending a dead primary's slots to its address.
			List<String> properties = new ArrayList<>(
					List.of("idempotent.store.type=redis", "spring.data.redis.cluster.nodes=" + this.setup.nodes(),
							"idempotent.store.redis.wait-replicas=" + this.waitReplicas,
							"spring.data.redis.lettuce.cluster.refresh.adaptive=true",
							"spring.data.redis.lettuce.cluster.refresh.period=2s", "spring.data.redis.timeout=3s",
							"spring.data.redis.connect-timeout=2s"));
			if (this.partition) {
				// ChaosApp maps this node's address to the proxy in Lettuce's resolver.
				properties.add("chaos.node-map=" + this.partitioned + ":" + proxyPort);
			}
			return properties;
		}

		@Override
		String beforeRestart() {
			List<LocalRedisCluster.Node> primaries = new ArrayList<>(this.setup.primaries());
			primaries.sort(Comparator.comparingInt(LocalRedisCluster.Node::port));
			this.victim = primaries.get(this.random.nextInt(primaries.size()));
			if (this.replicaLagMillis <= 0) {
				return null;
			}
			this.continueReplica = this.setup.cutOffReplica(this.victim.port());
			sleep(this.replicaLagMillis);
			return "replica cut off " + this.replicaLagMillis + " ms before the kill";
		}

		@Override
		String restart() {
			LocalRedisCluster.Node killed = this.victim;
			Runnable afterKill = this.continueReplica;
			this.victim = null;
			this.continueReplica = () -> {
			};
			this.last = this.setup.crashPrimaryAndAwaitFailover(killed, afterKill);
			return "primary " + killed.port() + " killed (slots " + String.join(",", killed.slots()) + "), replica "
					+ this.last.promotedPort() + " promoted, cluster ok after " + this.last.millis() + " ms";
		}

		@Override
		String afterRestart() {
			if (this.last == null) {
				return null;
			}
			long start = System.nanoTime();
			LocalRedisCluster.Failover failover = this.last;
			this.last = null;
			this.setup.replaceCrashed(failover);
			return "node " + failover.killed().port() + " replaced by a fresh replica of " + failover.promotedPort()
					+ ", in sync after " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start) + " ms";
		}

		@Override
		boolean failoverReaches(ChaosChecker.Fault failover, String key) {
			Matcher matcher = SLOTS.matcher(failover.detail());
			String prefix = recordPrefix();
			if (!matcher.find() || prefix == null) {
				return true;
			}
			LocalRedisCluster.Node killed = new LocalRedisCluster.Node("", 0, true, true, null,
					List.of(matcher.group(1).split(",")));
			return killed.serves(SlotHash.getSlot(prefix + key));
		}

		/** What the store puts before a key in its record key, read from a record. */
		private String recordPrefix() {
			if (this.recordPrefix == null) {
				for (LocalRedisCluster.Node primary : this.setup.primaries()) {
					List<String> keys = this.setup.onNode(primary.port(),
							(redis) -> redis.sync().scan(ScanArgs.Builder.matches("*:chaos-*").limit(1000)).getKeys());
					if (!keys.isEmpty()) {
						this.recordPrefix = keys.get(0).substring(0, keys.get(0).lastIndexOf(':') + 1);
						break;
					}
				}
			}
			return this.recordPrefix;
		}

		@Override
		boolean hasMemoryLimit() {
			return true;
		}

		@Override
		void memoryPressure(boolean on, boolean full) {
			// On every primary: just above what each uses, noeviction (Redis' default).
			for (LocalRedisCluster.Node primary : this.setup.primaries()) {
				this.setup.onNode(primary.port(), (redis) -> {
					if (!on) {
						return redis.sync().configSet("maxmemory", "0");
					}
					long used = redis.sync()
						.info("memory")
						.lines()
						.filter((line) -> line.startsWith("used_memory:"))
						.mapToLong((line) -> Long.parseLong(line.substring("used_memory:".length()).trim()))
						.findFirst()
						.orElse(0);
					return redis.sync().configSet("maxmemory", full ? "1" : Long.toString(used + 32 * 1024));
				});
			}
		}

		@Override
		List<String> inProgress() {
			List<String> found = new ArrayList<>();
			for (LocalRedisCluster.Node primary : this.setup.primaries()) {
				found.addAll(redisInProgress(primary.port()));
			}
			return found;
		}

		@Override
		public void close() {
			this.setup.close();
			delete(this.directory);
		}

	}

	/**
	 * A PostgreSQL server of the campaign's own ({@code initdb} as the {@code postgres}
	 * user in a temporary directory, on a free port), so that a restart is a real one
	 * ({@code pg_ctl stop -m immediate}, a crash: the server recovers from its WAL).
	 */
	static final class Postgres extends ChaosStore {

		private final String bin;

		private final String table;

		Postgres(long seed) {
			super("postgres");
			this.table = "chaos_" + Long.toUnsignedString(seed, 36);
			this.bin = postgresBin();
			run("chown", "postgres", this.directory.toString());
			asPostgres(this.bin + "/initdb", "-D", data(), "-A", "trust", "-U", "postgres", "--no-sync");
			start();
		}

		private static String postgresBin() {
			try (Stream<Path> versions = Files.list(Path.of("/usr/lib/postgresql"))) {
				return versions.map((version) -> version.resolve("bin"))
					.filter((bin) -> Files.isExecutable(bin.resolve("initdb")))
					.max(Comparator.naturalOrder())
					.orElseThrow(() -> new IllegalStateException("No initdb under /usr/lib/postgresql"))
					.toString();
			}
			catch (IOException ex) {
				throw new UncheckedIOException("PostgreSQL binaries must be under /usr/lib/postgresql", ex);
			}
		}

		private String data() {
			return this.directory.resolve("data").toString();
		}

		private void start() {
			asPostgres(this.bin + "/pg_ctl", "-D", data(), "-l", this.directory.resolve("postgres.log").toString(),
					"-w", "-t", "30", "-o", "-p " + this.port + " -c listen_addresses=127.0.0.1 -k " + this.directory
							+ " -c max_connections=60",
					"start");
		}

		@Override
		String name() {
			return "PostgreSQL " + this.port + " (private)";
		}

		@Override
		List<String> applicationProperties(int proxyPort) {
			return List.of("idempotent.store.type=jdbc", "idempotent.store.jdbc.initialize-schema=always",
					"idempotent.store.jdbc.table-name=" + this.table,
					"spring.datasource.url=jdbc:postgresql://127.0.0.1:" + proxyPort
							+ "/postgres?connectTimeout=3&socketTimeout=15",
					"spring.datasource.username=postgres", "spring.datasource.password=",
					"spring.datasource.hikari.connection-timeout=3000", "spring.datasource.hikari.maximum-pool-size=8");
		}

		@Override
		String restart() {
			asPostgres(this.bin + "/pg_ctl", "-D", data(), "-m", "immediate", "-w", "stop");
			start();
			return "pg_ctl stop -m immediate and start again";
		}

		@Override
		List<String> inProgress() {
			List<String> found = new ArrayList<>();
			try (Connection connection = DriverManager
				.getConnection("jdbc:postgresql://127.0.0.1:" + this.port + "/postgres", "postgres", "");
					Statement statement = connection.createStatement();
					ResultSet rows = statement
						.executeQuery("SELECT idempotency_key FROM " + this.table + " WHERE state = 'P'")) {
				while (rows.next()) {
					found.add(rows.getString(1));
				}
			}
			catch (SQLException ex) {
				throw new IllegalStateException("Could not read " + this.table, ex);
			}
			return found;
		}

		@Override
		public void close() {
			try {
				asPostgres(this.bin + "/pg_ctl", "-D", data(), "-m", "immediate", "-w", "stop");
			}
			finally {
				delete(this.directory);
			}
		}

		private void asPostgres(String... command) {
			asPostgresUser(command);
		}

		private static void run(String... command) {
			runCommand(command);
		}

	}

	/**
	 * A PostgreSQL primary and a streaming replica of the campaign's own (both
	 * {@code initdb}'ed or {@code pg_basebackup}'ed as the {@code postgres} user in a
	 * temporary directory, on free ports). The instances reach the primary through their
	 * proxies; the store's restart is a failover: the primary is crashed
	 * ({@code pg_ctl stop -m immediate}), the replica promoted ({@code pg_ctl promote}),
	 * and the proxies sent to it, as a virtual IP moves. Then a fresh replica is made of
	 * the new primary with {@code pg_basebackup -R} on the dead one's port, so a run can
	 * fail over again and again. {@code chaos.synchronous-commit=on}: the primary waits
	 * for the replica ({@code synchronous_standby_names = '*'},
	 * {@code synchronous_commit = on}; the checker then excuses no loss; while the fresh
	 * replica is made the new primary runs alone, its {@code synchronous_standby_names}
	 * emptied); {@code off}: {@code synchronous_commit = off}, the replica is
	 * asynchronous and a commit returns before its WAL is even written. With
	 * {@code chaos.replica-lag-ms}, the replica's WAL receiver is stopped and its
	 * connection ended that long before the crash.
	 */
	static final class PostgresFailover extends ChaosStore {

		private final String bin = Postgres.postgresBin();

		private final String table;

		private final boolean synchronous = "on".equals(System.getProperty("chaos.synchronous-commit", "off"));

		private final long replicaLagMillis = Long.getLong("chaos.replica-lag-ms", 0);

		private final List<io.github.idempotent.testsupport.FaultProxy> proxies = new java.util.concurrent.CopyOnWriteArrayList<>();

		private int primaryPort;

		private int replicaPort = freePort();

		private String primaryData;

		private String replicaData;

		private long stoppedReceiver;

		private int generation;

		PostgresFailover(long seed) {
			super("postgres-failover");
			this.table = "chaos_" + Long.toUnsignedString(seed, 36);
			this.primaryPort = this.port;
			runCommand("chown", "postgres", this.directory.toString());
			this.primaryData = this.directory.resolve("data-" + (this.generation++)).toString();
			asPostgresUser(this.bin + "/initdb", "-D", this.primaryData, "-A", "trust", "-U", "postgres", "--no-sync");
			List<String> settings = new ArrayList<>(
					List.of("wal_level = replica", "hot_standby = on", "wal_keep_size = 256MB", "max_connections = 60",
							"listen_addresses = '127.0.0.1'", "unix_socket_directories = '" + this.directory + "'"));
			settings.addAll(this.synchronous ? List.of("synchronous_standby_names = '*'", "synchronous_commit = on")
					: List.of("synchronous_commit = off"));
			asPostgresUser("sh", "-c", "printf '%s\\n' \"$@\" >> " + this.primaryData + "/postgresql.conf", "sh",
					String.join("\n", settings));
			start(this.primaryData, this.primaryPort);
			this.replicaData = makeReplica(this.primaryPort, this.replicaPort);
		}

		private String makeReplica(int of, int port) {
			String data = this.directory.resolve("data-" + (this.generation++)).toString();
			asPostgresUser(this.bin + "/pg_basebackup", "-D", data, "-R", "-X", "stream", "-h", "127.0.0.1", "-p",
					Integer.toString(of), "-U", "postgres", "--no-sync");
			start(data, port);
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
			while (!"streaming".equals(query(of, "SELECT state FROM pg_stat_replication LIMIT 1"))) {
				if (System.nanoTime() > deadline) {
					throw new IllegalStateException("The replica on port " + port + " does not stream");
				}
				sleep(100);
			}
			return data;
		}

		private void start(String data, int port) {
			asPostgresUser(this.bin + "/pg_ctl", "-D", data, "-l", data + ".log", "-w", "-t", "60", "-o", "-p " + port,
					"start");
		}

		private static String query(int port, String sql) {
			try (Connection connection = DriverManager
				.getConnection("jdbc:postgresql://127.0.0.1:" + port + "/postgres?connectTimeout=5", "postgres", "");
					Statement statement = connection.createStatement()) {
				if (!statement.execute(sql)) {
					return null;
				}
				try (ResultSet rows = statement.getResultSet()) {
					return rows.next() ? rows.getString(1) : null;
				}
			}
			catch (SQLException ex) {
				throw new IllegalStateException(sql + " on port " + port, ex);
			}
		}

		@Override
		String name() {
			return "PostgreSQL primary and streaming replica (private), synchronous_commit="
					+ (this.synchronous ? "on" : "off");
		}

		@Override
		int proxyTarget() {
			return this.primaryPort;
		}

		@Override
		void attach(io.github.idempotent.testsupport.FaultProxy proxy) {
			this.proxies.add(proxy);
		}

		@Override
		ChaosChecker.Kind restartKind() {
			return ChaosChecker.Kind.FAILOVER;
		}

		@Override
		int waitReplicas(int configured) {
			return this.synchronous ? 1 : 0;
		}

		@Override
		String lossSetting(int configured) {
			return "synchronous_commit=" + (this.synchronous ? "on, synchronous_standby_names='*'" : "off");
		}

		@Override
		List<String> applicationProperties(int proxyPort) {
			return List.of("idempotent.store.type=jdbc", "idempotent.store.jdbc.initialize-schema=always",
					"idempotent.store.jdbc.table-name=" + this.table,
					"spring.datasource.url=jdbc:postgresql://127.0.0.1:" + proxyPort
							+ "/postgres?connectTimeout=3&socketTimeout=15",
					"spring.datasource.username=postgres", "spring.datasource.password=",
					"spring.datasource.hikari.connection-timeout=3000", "spring.datasource.hikari.maximum-pool-size=8");
		}

		@Override
		String beforeRestart() {
			if (this.replicaLagMillis <= 0) {
				return null;
			}
			String receiver = query(this.replicaPort, "SELECT pid FROM pg_stat_wal_receiver");
			if (receiver == null) {
				return null;
			}
			this.stoppedReceiver = Long.parseLong(receiver);
			runCommand("kill", "-STOP", receiver);
			query(this.primaryPort, "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_replication");
			sleep(this.replicaLagMillis);
			return "replica's WAL receiver stopped and cut off " + this.replicaLagMillis + " ms before the kill";
		}

		@Override
		String restart() {
			long start = System.nanoTime();
			asPostgresUser(this.bin + "/pg_ctl", "-D", this.primaryData, "-m", "immediate", "-w", "stop");
			if (this.stoppedReceiver != 0) {
				runCommand("kill", "-CONT", Long.toString(this.stoppedReceiver));
				this.stoppedReceiver = 0;
			}
			asPostgresUser(this.bin + "/pg_ctl", "-D", this.replicaData, "-w", "-t", "60", "promote");
			if (this.synchronous) {
				// Alone until its new replica streams: a synchronous primary without one
				// would hold every commit.
				query(this.replicaPort, "ALTER SYSTEM SET synchronous_standby_names = ''");
				query(this.replicaPort, "SELECT pg_reload_conf()");
			}
			int killed = this.primaryPort;
			this.primaryPort = this.replicaPort;
			this.replicaPort = killed;
			String dead = this.primaryData;
			this.primaryData = this.replicaData;
			this.replicaData = dead;
			for (io.github.idempotent.testsupport.FaultProxy proxy : this.proxies) {
				proxy.retarget(this.primaryPort);
				proxy.cut();
			}
			return "primary " + killed + " killed, replica " + this.primaryPort
					+ " promoted and the proxies moved after "
					+ TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start) + " ms";
		}

		@Override
		String afterRestart() {
			long start = System.nanoTime();
			delete(Path.of(this.replicaData));
			this.replicaData = makeReplica(this.primaryPort, this.replicaPort);
			if (this.synchronous) {
				query(this.primaryPort, "ALTER SYSTEM SET synchronous_standby_names = '*'");
				query(this.primaryPort, "SELECT pg_reload_conf()");
			}
			return "fresh replica of " + this.primaryPort + " on " + this.replicaPort + " streaming after "
					+ TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start) + " ms";
		}

		@Override
		List<String> inProgress() {
			List<String> found = new ArrayList<>();
			try (Connection connection = DriverManager
				.getConnection("jdbc:postgresql://127.0.0.1:" + this.primaryPort + "/postgres", "postgres", "");
					Statement statement = connection.createStatement();
					ResultSet rows = statement
						.executeQuery("SELECT idempotency_key FROM " + this.table + " WHERE state = 'P'")) {
				while (rows.next()) {
					found.add(rows.getString(1));
				}
			}
			catch (SQLException ex) {
				throw new IllegalStateException("Could not read " + this.table, ex);
			}
			return found;
		}

		@Override
		public void close() {
			for (String data : List.of(this.primaryData, this.replicaData)) {
				try {
					asPostgresUser(this.bin + "/pg_ctl", "-D", data, "-m", "immediate", "-w", "stop");
				}
				catch (IllegalStateException ex) {
					// not running
				}
			}
			delete(this.directory);
		}

	}

	static void asPostgresUser(String... command) {
		List<String> full = new ArrayList<>(List.of("runuser", "-u", "postgres", "--"));
		full.addAll(List.of(command));
		runCommand(full.toArray(String[]::new));
	}

	static void runCommand(String... command) {
		try {
			Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
			String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
			if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
				throw new IllegalStateException(String.join(" ", command) + " failed:\n" + output);
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * A MariaDB server of the campaign's own ({@code mariadb-install-db} in a temporary
	 * directory, {@code mariadbd} on a free port, InnoDB's defaults: the redo log flushed
	 * at every commit), never the shared one: a restart is a crash ({@code kill -9}) and
	 * a start, recovering from the redo log.
	 */
	static final class MariaDb extends ChaosStore {

		private final String table;

		private Process process;

		MariaDb(long seed) {
			super("mariadb");
			this.table = "chaos_" + Long.toUnsignedString(seed, 36);
			runCommand("mariadb-install-db", "--no-defaults", "--datadir=" + data(), "--user=root",
					"--auth-root-authentication-method=normal", "--skip-test-db");
			launch();
			try (Connection connection = DriverManager.getConnection(url(this.port, ""), "root", "");
					Statement statement = connection.createStatement()) {
				statement.execute("CREATE DATABASE IF NOT EXISTS chaos");
			}
			catch (SQLException ex) {
				throw new IllegalStateException("Could not create the database", ex);
			}
		}

		private String data() {
			return this.directory.resolve("data").toString();
		}

		private static String url(int port, String database) {
			return "jdbc:mariadb://127.0.0.1:" + port + "/" + database;
		}

		private void launch() {
			try {
				this.process = new ProcessBuilder("mariadbd", "--no-defaults", "--datadir=" + data(),
						"--port=" + this.port, "--bind-address=127.0.0.1",
						"--socket=" + this.directory.resolve("mariadb.sock"), "--user=root", "--max-connections=60",
						"--skip-name-resolve")
					.redirectErrorStream(true)
					.redirectOutput(ProcessBuilder.Redirect.appendTo(this.directory.resolve("mariadb.log").toFile()))
					.start();
			}
			catch (IOException ex) {
				throw new UncheckedIOException("mariadbd must be on the PATH", ex);
			}
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
			while (true) {
				try (Connection connection = DriverManager.getConnection(url(this.port, ""), "root", "")) {
					return;
				}
				catch (SQLException ex) {
					if (!this.process.isAlive() || System.nanoTime() > deadline) {
						throw new IllegalStateException("mariadbd on port " + this.port + " did not start", ex);
					}
					sleep(100);
				}
			}
		}

		@Override
		String name() {
			return "MariaDB " + this.port + " (private)";
		}

		@Override
		List<String> applicationProperties(int proxyPort) {
			return List.of("idempotent.store.type=jdbc", "idempotent.store.jdbc.initialize-schema=always",
					"idempotent.store.jdbc.table-name=" + this.table,
					"spring.datasource.url=" + url(proxyPort, "chaos") + "?connectTimeout=3000&socketTimeout=15000",
					"spring.datasource.username=root", "spring.datasource.password=",
					"spring.datasource.hikari.connection-timeout=3000", "spring.datasource.hikari.maximum-pool-size=8");
		}

		@Override
		String restart() {
			this.process.destroyForcibly();
			try {
				this.process.waitFor(10, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			launch();
			return "kill -9 and start again (InnoDB crash recovery)";
		}

		@Override
		List<String> inProgress() {
			List<String> found = new ArrayList<>();
			try (Connection connection = DriverManager.getConnection(url(this.port, "chaos"), "root", "");
					Statement statement = connection.createStatement();
					ResultSet rows = statement.executeQuery(
							"SELECT CAST(idempotency_key AS CHAR) FROM " + this.table + " WHERE state = 'P'")) {
				while (rows.next()) {
					found.add(rows.getString(1));
				}
			}
			catch (SQLException ex) {
				throw new IllegalStateException("Could not read " + this.table, ex);
			}
			return found;
		}

		@Override
		public void close() {
			this.process.destroyForcibly();
			try {
				this.process.waitFor(10, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			delete(this.directory);
		}

	}

}
