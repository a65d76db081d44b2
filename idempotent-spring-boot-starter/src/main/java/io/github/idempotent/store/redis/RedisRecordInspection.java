package io.github.idempotent.store.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;

import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;

import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.ReturnType;
import org.springframework.util.Assert;

import io.github.idempotent.store.IdempotencyRecord;
import io.github.idempotent.store.InspectableIdempotencyStore.Deletion;
import io.github.idempotent.store.InspectableIdempotencyStore.InProgressPage;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.StoredResult;

/**
 * What {@link RedisIdempotencyStore} shows and does for operators (the Actuator endpoint,
 * through {@link io.github.idempotent.store.InspectableIdempotencyStore}): read a record
 * whatever its layout, list the records in progress, delete one. A forced delete leaves a
 * tombstone (the delete script), so that the deleted call's owner is fenced out instead
 * of writing its record anew.
 */
final class RedisRecordInspection {

	private final RedisConnectionFactory connectionFactory;

	private final RedisScriptRunner scripts;

	RedisRecordInspection(RedisConnectionFactory connectionFactory, RedisScriptRunner scripts) {
		this.connectionFactory = connectionFactory;
		this.scripts = scripts;
	}

	Optional<IdempotencyRecord> inspect(RecordKey key) {
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			return Optional.ofNullable(inspect(connection, key, Instant.now()));
		}
	}

	private static @Nullable IdempotencyRecord inspect(RedisConnection connection, RecordKey key, Instant now) {
		return record(key, RedisScriptRunner.execute(connection, RedisScripts.INSPECT, ReturnType.MULTI,
				RedisIdempotencyStore.keyOf(key)), now);
	}

	/**
	 * The record in the inspect script's {@code reply}, {@code null} for none (or a
	 * tombstone).
	 */
	static @Nullable IdempotencyRecord record(RecordKey key, @Nullable List<?> reply, Instant now) {
		Assert.state(reply != null && !reply.isEmpty(), "Empty reply from the inspect script");
		long kind = (Long) reply.get(0);
		if (kind == 0) {
			return null;
		}
		long pttl = (Long) reply.get(1);
		Duration expiresIn = (pttl >= 0) ? Duration.ofMillis(pttl) : null;
		if (kind == 3) {
			return IdempotencyRecord.unreadable(key, RedisScripts.notARecord(reply.get(2)), expiresIn);
		}
		if (kind == 1) {
			byte[] stored = (byte[]) reply.get(2);
			if (RecordLayout.isTombstone(stored)) {
				// A forced delete: no call holds the key, and nothing is stored.
				return null;
			}
			String damage = RecordLayout.damage(stored);
			if (damage != null) {
				return IdempotencyRecord.unreadable(key, damage, expiresIn);
			}
			boolean inProgress = RecordLayout.isInProgress(stored);
			if (inProgress && expiresIn != null) {
				// The lease left, not the hour the placeholder is kept after it: 0 for
				// a call whose lease ran out, which no longer holds the key.
				expiresIn = Duration.ofMillis(RecordLayout.leaseMillis(stored, pttl));
			}
			return new IdempotencyRecord(key,
					inProgress ? IdempotencyRecord.State.IN_PROGRESS : IdempotencyRecord.State.COMPLETED,
					RecordLayout.fingerprint(stored), RecordLayout.claimedAt(stored, now), expiresIn,
					inProgress ? null : new StoredResult(RecordLayout.result(stored)));
		}
		return PreviousRecordLayout.record(key, reply, expiresIn);
	}

	/**
	 * SCAN with a MATCH on the key prefix and a COUNT of {@code limit}, then one read per
	 * key found. On Redis Cluster each primary is scanned in turn (the cursor names the
	 * node); a page covers one node's SCAN step. Needs Lettuce: Spring Data Redis's
	 * cursor cannot resume a scan from a cursor that an earlier request returned.
	 */
	@SuppressWarnings("unchecked")
	InProgressPage findInProgress(String keyPrefix, Duration olderThan, @Nullable String cursor, int limit) {
		ScanArgs args = new ScanArgs().match((globEscape(keyPrefix) + ":*").getBytes(StandardCharsets.UTF_8))
			.limit(limit);
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			Object nativeConnection = connection.getNativeConnection();
			KeyScanCursor<byte[]> scanned;
			String node = null;
			List<String> primaries = List.of();
			if (nativeConnection instanceof RedisAdvancedClusterAsyncCommands<?, ?> cluster) {
				primaries = primaries((RedisAdvancedClusterAsyncCommands<byte[], byte[]>) cluster);
				String position = (cursor != null) ? cursor : primaries.get(0) + ":0";
				int colon = position.lastIndexOf(':');
				Assert.isTrue(colon > 0, "Not a cursor of this store: " + position);
				node = position.substring(0, colon);
				scanned = await(((RedisAdvancedClusterAsyncCommands<byte[], byte[]>) cluster).getConnection(node)
					.scan(ScanCursor.of(position.substring(colon + 1)), args));
			}
			else if (nativeConnection instanceof RedisClusterAsyncCommands<?, ?> commands) {
				scanned = await(((RedisClusterAsyncCommands<byte[], byte[]>) commands)
					.scan(ScanCursor.of((cursor != null) ? cursor : "0"), args));
			}
			else {
				throw new UnsupportedOperationException(
						"Finding the records in progress needs a LettuceConnectionFactory");
			}
			Instant now = Instant.now();
			List<IdempotencyRecord> records = new ArrayList<>();
			for (byte[] key : scanned.getKeys()) {
				IdempotencyRecord record = inspect(connection, new RecordKey(new String(key, StandardCharsets.UTF_8)),
						now);
				// An unreadable record may be a call in progress as well as anything
				// else: listed, so that an operator sees it, whatever its age.
				if (record != null && record.state() == IdempotencyRecord.State.UNREADABLE) {
					records.add(record);
				}
				else if (record != null && record.state() == IdempotencyRecord.State.IN_PROGRESS) {
					Duration age = record.age(now);
					if (age == null || age.compareTo(olderThan) >= 0) {
						records.add(record);
					}
				}
			}
			return new InProgressPage(records, nextCursor(scanned, node, primaries));
		}
	}

	private static @Nullable String nextCursor(KeyScanCursor<byte[]> scanned, @Nullable String node,
			List<String> primaries) {
		if (node == null) {
			return scanned.isFinished() ? null : scanned.getCursor();
		}
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

	/**
	 * The prefix with the characters that a MATCH pattern interprets escaped.
	 */
	private static String globEscape(String text) {
		StringBuilder sb = new StringBuilder(text.length() + 4);
		for (int i = 0; i < text.length(); i++) {
			char c = text.charAt(i);
			if ("*?[]\\".indexOf(c) >= 0) {
				sb.append('\\');
			}
			sb.append(c);
		}
		return sb.toString();
	}

	boolean delete(RecordKey key) {
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			Long deleted = connection.keyCommands().del(RedisIdempotencyStore.keyOf(key));
			return deleted != null && deleted > 0;
		}
	}

	/**
	 * Deletes the record if it is in {@code state} ({@link RecordLayout#IN_PROGRESS}:
	 * forced, {@link RecordLayout#COMPLETED}: unless held), by the delete script.
	 */
	Deletion deleteIf(RecordKey key, byte state) {
		Long reply = this.scripts.executeAndWait(RedisScripts.DELETE_IF, ReturnType.INTEGER, null,
				RedisIdempotencyStore.keyOf(key), new byte[] { state }, RedisIdempotencyStore.REMEMBERED_MILLIS);
		if (reply == null || reply == 0) {
			return Deletion.NONE;
		}
		if (reply == 1) {
			return Deletion.DELETED;
		}
		return (reply == 2) ? Deletion.HELD : Deletion.COMPLETED;
	}

}
