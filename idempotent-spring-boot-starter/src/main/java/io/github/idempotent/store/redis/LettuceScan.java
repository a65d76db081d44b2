package io.github.idempotent.store.redis;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutionException;

import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;

import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;

import io.github.idempotent.store.redis.RedisRecordInspection.ScanStep;

/**
 * One SCAN step on Lettuce's native connection, resumed from an earlier step's cursor,
 * which Spring Data Redis's cursor cannot do. On Redis Cluster the cursor names the node.
 */
final class LettuceScan {

	private LettuceScan() {
	}

	@SuppressWarnings("unchecked")
	static ScanStep scan(Object nativeConnection, byte[] pattern, @Nullable String cursor, int limit) {
		ScanArgs args = new ScanArgs().match(pattern).limit(limit);
		if (nativeConnection instanceof RedisAdvancedClusterAsyncCommands<?, ?> cluster) {
			RedisAdvancedClusterAsyncCommands<byte[], byte[]> nodes = (RedisAdvancedClusterAsyncCommands<byte[], byte[]>) cluster;
			List<String> primaries = primaries(nodes);
			String position = (cursor != null) ? cursor : primaries.get(0) + ":0";
			int colon = position.lastIndexOf(':');
			Assert.isTrue(colon > 0, "Not a cursor of this store: " + position);
			String node = position.substring(0, colon);
			KeyScanCursor<byte[]> scanned = await(
					nodes.getConnection(node).scan(ScanCursor.of(position.substring(colon + 1)), args));
			return new ScanStep(scanned.getKeys(), nextCursor(scanned, node, primaries));
		}
		if (nativeConnection instanceof RedisClusterAsyncCommands<?, ?> commands) {
			KeyScanCursor<byte[]> scanned = await(((RedisClusterAsyncCommands<byte[], byte[]>) commands)
				.scan(ScanCursor.of((cursor != null) ? cursor : "0"), args));
			return new ScanStep(scanned.getKeys(), scanned.isFinished() ? null : scanned.getCursor());
		}
		throw new UnsupportedOperationException("Finding the records in progress needs a LettuceConnectionFactory");
	}

	private static @Nullable String nextCursor(KeyScanCursor<byte[]> scanned, String node, List<String> primaries) {
		if (!scanned.isFinished()) {
			return node + ":" + scanned.getCursor();
		}
		int next = primaries.indexOf(node) + 1;
		return (next > 0 && next < primaries.size()) ? primaries.get(next) + ":0" : null;
	}

	private static List<String> primaries(RedisAdvancedClusterAsyncCommands<byte[], byte[]> cluster) {
		List<String> primaries = new ArrayList<>();
		for (RedisClusterNode node : cluster.getStatefulConnection().getPartitions()) {
			if (node.is(RedisClusterNode.NodeFlag.UPSTREAM)) {
				primaries.add(node.getNodeId());
			}
		}
		Collections.sort(primaries);
		Assert.state(!primaries.isEmpty(), "The Redis Cluster has no primary");
		return primaries;
	}

	private static <T> T await(RedisFuture<T> reply) {
		try {
			return reply.get();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while scanning Redis", ex);
		}
		catch (ExecutionException ex) {
			throw (ex.getCause() instanceof RuntimeException runtime) ? runtime
					: new IllegalStateException("Could not scan Redis", ex.getCause());
		}
	}

}
