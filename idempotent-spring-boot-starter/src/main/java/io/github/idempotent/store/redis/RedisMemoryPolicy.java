package io.github.idempotent.store.redis;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.util.Assert;

/**
 * What {@code INFO memory} says of one server of the store. Any {@code maxmemory-policy}
 * but {@code noeviction} may evict the store's records (all have a TTL), and a dropped
 * record lets a retry run the method again.
 *
 * @param server the server, as host and port where known
 * @param maxmemory memory limit in bytes, 0 for none
 * @param evictedKeys keys evicted since the server started, -1 when not read
 * @param usedMemory memory in use in bytes, -1 when not read
 */
public record RedisMemoryPolicy(String server, long maxmemory, String policy, long evictedKeys, long usedMemory) {

	private static final Log logger = LogFactory.getLog(RedisMemoryPolicy.class);

	static final String ALLOW_PROPERTY = "idempotent.store.redis.allow-evicting-policy";

	/**
	 * Whether the server may evict the store's records: bounded memory, any policy but
	 * {@code noeviction}.
	 */
	public boolean evicts() {
		return this.maxmemory > 0 && !"noeviction".equals(this.policy);
	}

	/**
	 * Whether used memory is above {@code limit} of {@code maxmemory} under
	 * {@code noeviction}.
	 * @param limit share of {@code maxmemory}
	 */
	public boolean isAbove(double limit) {
		return this.maxmemory > 0 && "noeviction".equals(this.policy) && this.usedMemory > limit * this.maxmemory;
	}

	/**
	 * Reads the memory of every server behind {@code connectionFactory}; empty when a
	 * proxy hides it.
	 */
	public static List<RedisMemoryPolicy> read(RedisConnectionFactory connectionFactory) {
		Properties info = new Properties();
		try (RedisConnection redis = connectionFactory.getConnection()) {
			// Two commands: Redis before 7.0 answers one section per INFO.
			for (String section : new String[] { "memory", "stats" }) {
				Properties answer = redis.serverCommands().info(section);
				if (answer != null) {
					info.putAll(answer);
				}
			}
		}
		String named = RedisClients.isLettuce(connectionFactory) ? LettuceCommands.serverName(connectionFactory) : null;
		String server = (named != null) ? named : "Redis";
		// A cluster connection prefixes keys with the node's address.
		Map<String, Properties> byServer = new LinkedHashMap<>();
		for (String name : info.stringPropertyNames()) {
			int dot = name.lastIndexOf('.');
			String node = (dot > 0) ? name.substring(0, dot) : server;
			byServer.computeIfAbsent(node, (key) -> new Properties())
				.setProperty(name.substring(dot + 1), info.getProperty(name));
		}
		List<RedisMemoryPolicy> policies = new ArrayList<>();
		byServer.forEach((node, properties) -> {
			String maxmemory = properties.getProperty("maxmemory");
			String policy = properties.getProperty("maxmemory_policy");
			if (maxmemory != null && policy != null) {
				policies.add(new RedisMemoryPolicy(node, Long.parseLong(maxmemory.trim()), policy.trim(),
						Long.parseLong(properties.getProperty("evicted_keys", "-1").trim()),
						Long.parseLong(properties.getProperty("used_memory", "-1").trim())));
			}
		});
		return policies;
	}

	/**
	 * Refuses a bounded memory with an evicting policy unless the application accepted
	 * the risk; a Redis down at start-up is only logged.
	 * @throws IllegalStateException when the policy evicts and that is not accepted
	 */
	public static void check(RedisConnectionFactory connectionFactory, boolean evictingPolicyAllowed) {
		List<RedisMemoryPolicy> policies;
		try {
			policies = read(connectionFactory);
		}
		catch (RuntimeException ex) {
			logger.warn("Could not read the memory policy of the idempotency store's Redis (" + ex.getMessage()
					+ "); the health indicator idempotentRedisMemory reports it once Redis answers");
			return;
		}
		if (policies.isEmpty()) {
			logger.warn("INFO memory of the idempotency store's Redis does not show maxmemory and "
					+ "maxmemory_policy: make sure it cannot evict records (noeviction)");
		}
		for (RedisMemoryPolicy policy : policies) {
			if (policy.evicts()) {
				Assert.state(evictingPolicyAllowed, () -> "The Redis of the idempotency store (" + policy.server()
						+ ") has maxmemory " + policy.maxmemory() + " bytes and maxmemory-policy " + policy.policy()
						+ ": when its memory is full it evicts keys, and every record of the store has a TTL"
						+ (policy.policy().equals("volatile-ttl")
								? " (volatile-ttl evicts the placeholders of calls in progress first)" : "")
						+ ". An evicted record lets a retry run the method again, e.g. a payment twice. Set "
						+ "maxmemory-policy noeviction (a full Redis then refuses new claims, which fail as the store "
						+ "being down, instead of forgetting old ones), or use a Redis of its own with unbounded "
						+ "memory (maxmemory 0) sized for the records (docs/stores.md, Memory); or accept the risk "
						+ "with " + ALLOW_PROPERTY + "=true");
				logger.warn("The Redis of the idempotency store (" + policy.server() + ") may evict records "
						+ "(maxmemory " + policy.maxmemory() + ", maxmemory-policy " + policy.policy()
						+ "), accepted by " + ALLOW_PROPERTY + ": a retry of an evicted key runs its method again");
			}
		}
	}

}
