package io.github.idempotent.store.redis;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Function;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.jspecify.annotations.Nullable;

import org.springframework.context.SmartLifecycle;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.util.Assert;

/**
 * Keeps {@link RedisIdempotencyStore} off a Redis that may evict its records. Under
 * memory pressure, any {@code maxmemory-policy} but {@code noeviction} drops keys, and
 * the store's keys all have a TTL, so the {@code volatile-*} policies drop them too
 * ({@code volatile-ttl} first drops the placeholders of calls in progress, whose leases
 * are the shortest). A dropped placeholder or result lets a retry run the method again.
 * <p>
 * {@link #check()} reads {@code maxmemory} and {@code maxmemory_policy} from
 * {@code INFO memory}, which managed services answer where they refuse
 * {@code CONFIG GET}, and refuses a bounded memory with an evicting policy unless the
 * application accepted the risk, on every client. On a Lettuce connection factory for a
 * standalone or Sentinel Redis it then keeps a connection of its own
 * ({@link LettuceInfoConnection}), so that every reconnect (a restart, a failover to a
 * differently configured server) is checked again; an evicting policy found then cannot
 * stop the application any more: it is logged as an error once per server and reported by
 * {@link #isEvicting()}. Each {@link #evictedKeys()} checks again in the background, so a
 * metrics scrape also sees a policy changed at runtime.
 * <p>
 * A {@link SmartLifecycle} one phase above the connection factory, so that its connection
 * closes while Lettuce still runs.
 */
public final class RedisMemoryPolicyGuard implements SmartLifecycle, AutoCloseable {

	private static final Log logger = LogFactory.getLog(RedisMemoryPolicyGuard.class);

	/** Property through which an application accepts an evicting policy. */
	static final String ALLOW_PROPERTY = "idempotent.store.redis.allow-evicting-policy";

	private static final long RETRY_CONNECT_SECONDS = 5;

	private final RedisConnectionFactory connectionFactory;

	private final boolean evictingPolicyAllowed;

	// Opens the guard's connection, told of every reconnect; null where that cannot be.
	private final @Nullable Function<Consumer<String>, InfoConnection> connector;

	private final @Nullable String serverName;

	private final int phase;

	private final Set<String> reported = ConcurrentHashMap.newKeySet();

	private final AtomicBoolean refreshing = new AtomicBoolean();

	private volatile @Nullable ScheduledExecutorService scheduler;

	private volatile @Nullable InfoConnection connection;

	private volatile @Nullable MemoryPolicy lastSeen;

	// Where the guard's connection last reconnected to, null before the first reconnect.
	private volatile @Nullable String connectedServer;

	private volatile long evictedKeys = -1;

	private volatile boolean running;

	/**
	 * @param connectionFactory the store's connection factory
	 * @param evictingPolicyAllowed whether the application accepts a Redis that may evict
	 * records (a second run of a method whose record was evicted)
	 */
	public RedisMemoryPolicyGuard(RedisConnectionFactory connectionFactory, boolean evictingPolicyAllowed) {
		Assert.notNull(connectionFactory, "connectionFactory must not be null");
		this.connectionFactory = connectionFactory;
		this.evictingPolicyAllowed = evictingPolicyAllowed;
		boolean lettuce = RedisClients.isLettuce(connectionFactory);
		this.connector = lettuce ? LettuceInfoConnection.connector(connectionFactory) : null;
		this.serverName = lettuce ? LettuceInfoConnection.serverName(connectionFactory) : null;
		this.phase = RedisClients.phaseBefore(connectionFactory);
	}

	/**
	 * Reads the memory policy of the store's Redis (every node of a cluster) and refuses
	 * an evicting one, then watches for reconnects.
	 * @throws IllegalStateException when memory is bounded, the policy evicts and the
	 * application has not accepted it
	 */
	public void check() {
		List<MemoryPolicy> policies;
		try (RedisConnection redis = this.connectionFactory.getConnection()) {
			Properties info = new Properties();
			Properties memory = redis.serverCommands().info("memory");
			Properties stats = redis.serverCommands().info("stats");
			// Two commands: Redis before 7.0 answers one section per INFO.
			if (memory != null) {
				info.putAll(memory);
			}
			if (stats != null) {
				info.putAll(stats);
			}
			policies = MemoryPolicy.of(info, serverName());
			if (policies.isEmpty()) {
				// A proxy that hides them: nothing to go by, and nothing to refuse.
				logger.warn("INFO memory of the idempotency store's Redis (" + serverName() + ") does not show "
						+ "maxmemory and maxmemory_policy: make sure it cannot evict records (noeviction)");
			}
		}
		catch (RuntimeException ex) {
			// Down at start-up: the store starts as it would without this check (a call
			// fails closed or runs open); the policy is checked once the guard connects.
			logger.warn("Could not read the memory policy of the idempotency store's Redis (" + ex.getMessage()
					+ "); it is checked once Redis answers");
			policies = List.of();
		}
		for (MemoryPolicy policy : policies) {
			if (policy.evicts() && !this.evictingPolicyAllowed) {
				throw new IllegalStateException(refusal(policy));
			}
			judge(policy, Check.START);
		}
		watch(policies.isEmpty());
	}

	/**
	 * Opens the guard's connection in the background, so that reconnects are checked.
	 * @param checkNow whether to check once it is open
	 */
	private synchronized void watch(boolean checkNow) {
		this.running = true;
		if (this.connector != null) {
			ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor((task) -> {
				Thread thread = new Thread(task, "idempotent-memory-policy");
				thread.setDaemon(true);
				return thread;
			});
			this.scheduler = scheduler;
			scheduler.execute(() -> connect(checkNow));
		}
	}

	/**
	 * When a policy is read.
	 */
	private enum Check {

		START, RECONNECT, REFRESH

	}

	private String serverName() {
		return (this.serverName != null) ? this.serverName : "Redis";
	}

	static String refusal(MemoryPolicy policy) {
		return "The Redis of the idempotency store (" + policy.server() + ") has maxmemory " + policy.maxmemory()
				+ " bytes and maxmemory-policy " + policy.policy() + ": when its memory is full it evicts keys, "
				+ "and every record of the store has a TTL"
				+ (policy.policy().equals("volatile-ttl")
						? " (volatile-ttl evicts the placeholders of calls in progress first)" : "")
				+ ". An evicted record lets a retry run the method again, e.g. a payment twice. Set "
				+ "maxmemory-policy noeviction (a full Redis then refuses new claims, which fail as the store "
				+ "being down, instead of forgetting old ones), or use a Redis of its own with unbounded memory "
				+ "(maxmemory 0) sized for the records (docs/stores.md, Memory); or accept the risk with "
				+ ALLOW_PROPERTY + "=true";
	}

	/**
	 * Logs what {@code policy} means: an evicting one once per server and policy (after
	 * start-up, when the application can no longer be stopped, as an error), a safe one
	 * after every reconnect.
	 */
	private void judge(MemoryPolicy policy, Check check) {
		this.lastSeen = policy;
		if (policy.evictedKeys() >= 0) {
			this.evictedKeys = policy.evictedKeys();
		}
		String seen = policy.server() + ' ' + policy.maxmemory() + ' ' + policy.policy();
		boolean first = this.reported.add(seen);
		if (!policy.evicts()) {
			// Every reconnect says so: they are rare, and an operator may want to see it.
			if (check == Check.RECONNECT || (first && check == Check.REFRESH)) {
				logger.info("Memory policy of the idempotency store's Redis checked again (" + policy.server()
						+ "): maxmemory " + policy.maxmemory() + ", maxmemory-policy " + policy.policy()
						+ ", records are not evicted");
			}
		}
		else if (!first) {
			return;
		}
		else if (this.evictingPolicyAllowed) {
			logger.warn("The Redis of the idempotency store (" + policy.server() + ") may evict records "
					+ "(maxmemory " + policy.maxmemory() + ", maxmemory-policy " + policy.policy() + "), accepted by "
					+ ALLOW_PROPERTY + ": a retry of an evicted key runs its method again");
		}
		else {
			logger.error("Checked again after start-up: " + refusal(policy)
					+ ". The application keeps running: restore the policy now");
		}
	}

	private void connect(boolean checkNow) {
		Function<Consumer<String>, InfoConnection> connector = this.connector;
		if (connector == null || !this.running || this.connection != null) {
			return;
		}
		InfoConnection opened;
		try {
			opened = connector.apply((server) -> {
				// A restart or a failover: the server may be another one, differently
				// configured. Asynchronous: this runs on Lettuce's event loop.
				this.connectedServer = server;
				refresh(Check.RECONNECT);
			});
		}
		catch (RuntimeException ex) {
			ScheduledExecutorService scheduler = this.scheduler;
			if (this.running && scheduler != null) {
				scheduler.schedule(() -> connect(true), RETRY_CONNECT_SECONDS, TimeUnit.SECONDS);
			}
			return;
		}
		synchronized (this) {
			if (!this.running) {
				opened.closeAsync();
				return;
			}
			this.connection = opened;
		}
		if (checkNow) {
			refresh(Check.REFRESH);
		}
	}

	/**
	 * Reads the memory policy and the evictions again in the background; one read at a
	 * time.
	 */
	private void refresh(Check check) {
		InfoConnection current = this.connection;
		// A reconnect is always checked: a scrape's read in flight may have been sent
		// before it, and answered by whichever server comes after.
		boolean scrape = check != Check.RECONNECT;
		if (current == null || !this.running || (scrape && !this.refreshing.compareAndSet(false, true))) {
			return;
		}
		try {
			current.memoryAndStats().whenComplete((info, ex) -> {
				if (scrape) {
					this.refreshing.set(false);
				}
				if (ex == null && this.running) {
					// Named when answered: the server that answered is the latest one
					// connected to.
					MemoryPolicy.of(parse(info), currentServerName()).forEach((policy) -> judge(policy, check));
				}
			});
		}
		catch (RuntimeException ex) {
			if (scrape) {
				this.refreshing.set(false);
			}
		}
	}

	private String currentServerName() {
		String connected = this.connectedServer;
		return (connected != null) ? connected : serverName();
	}

	static Properties parse(String info) {
		Properties properties = new Properties();
		for (String line : info.split("\r?\n")) {
			int colon = line.indexOf(':');
			if (colon > 0 && !line.startsWith("#")) {
				properties.setProperty(line.substring(0, colon), line.substring(colon + 1).trim());
			}
		}
		return properties;
	}

	/**
	 * Whether the server last checked may evict records: bounded memory with an evicting
	 * policy, accepted or not.
	 */
	public boolean isEvicting() {
		MemoryPolicy last = this.lastSeen;
		return last != null && last.evicts();
	}

	/**
	 * What the last check read, or {@code null} before the first one succeeded.
	 */
	public @Nullable MemoryPolicy lastSeen() {
		return this.lastSeen;
	}

	/**
	 * Keys the server has evicted since it started ({@code evicted_keys}, any key, not
	 * only records) as of the last check, -1 when unknown; starts the next check.
	 */
	public long evictedKeys() {
		refresh(Check.REFRESH);
		return this.evictedKeys;
	}

	/**
	 * Watches again after {@link #stop()}, and checks at once. The first check is
	 * {@link #check()}'s, when the bean is created: a refusal must stop the context
	 * before anything starts.
	 */
	@Override
	public void start() {
		if (!this.running) {
			watch(true);
		}
	}

	/**
	 * Closes the guard's connection while the connection factory still runs.
	 */
	@Override
	public void stop() {
		close();
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	@Override
	public int getPhase() {
		return this.phase;
	}

	@Override
	public void close() {
		InfoConnection current;
		synchronized (this) {
			this.running = false;
			current = this.connection;
			this.connection = null;
		}
		ScheduledExecutorService scheduler = this.scheduler;
		if (scheduler != null) {
			scheduler.shutdownNow();
		}
		if (current != null) {
			current.close();
		}
	}

	/**
	 * The guard's connection of its own ({@link LettuceInfoConnection}), which tells of
	 * every reconnect.
	 */
	interface InfoConnection {

		/**
		 * {@code INFO memory} and {@code INFO stats}, as one text.
		 */
		CompletableFuture<String> memoryAndStats();

		/**
		 * Closes it without waiting.
		 */
		void closeAsync();

		/**
		 * Closes it, waiting at most the client's command timeout.
		 */
		void close();

	}

	/**
	 * What {@code INFO} says of one server's memory.
	 *
	 * @param server the server, as host and port where known
	 * @param maxmemory memory limit in bytes, 0 for none
	 * @param policy {@code maxmemory-policy}
	 * @param evictedKeys keys evicted since the server started, -1 when not read
	 * @param usedMemory memory in use in bytes ({@code used_memory}), -1 when not read
	 */
	public record MemoryPolicy(String server, long maxmemory, String policy, long evictedKeys, long usedMemory) {

		/**
		 * Whether the server may evict the store's records: bounded memory and any policy
		 * but {@code noeviction} (the store's keys all have a TTL, so {@code volatile-*}
		 * policies evict them too).
		 */
		public boolean evicts() {
			return this.maxmemory > 0 && !"noeviction".equals(this.policy);
		}

		/**
		 * The policies in {@code info}: one server's, or, from a cluster connection, one
		 * per node (keys prefixed with the node's address).
		 */
		static List<MemoryPolicy> of(@Nullable Properties info, String server) {
			if (info == null) {
				return List.of();
			}
			Map<String, Properties> byServer = new LinkedHashMap<>();
			for (String name : info.stringPropertyNames()) {
				int dot = name.lastIndexOf('.');
				String node = (dot > 0) ? name.substring(0, dot) : server;
				byServer.computeIfAbsent(node, (key) -> new Properties())
					.setProperty(name.substring(dot + 1), info.getProperty(name));
			}
			List<MemoryPolicy> policies = new ArrayList<>();
			byServer.forEach((node, properties) -> {
				String maxmemory = properties.getProperty("maxmemory");
				String policy = properties.getProperty("maxmemory_policy");
				if (maxmemory != null && policy != null) {
					policies.add(new MemoryPolicy(node, Long.parseLong(maxmemory.trim()), policy.trim(),
							Long.parseLong(properties.getProperty("evicted_keys", "-1").trim()),
							Long.parseLong(properties.getProperty("used_memory", "-1").trim())));
				}
			});
			return policies;
		}

	}

}
