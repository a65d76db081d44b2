package io.github.idempotent.store.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisClusterConnection;
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
 * What {@link RedisIdempotencyStore} shows and does for operators (the Actuator): read a
 * record, list the records in progress, delete one. A forced delete leaves a tombstone,
 * so that the deleted call's owner is fenced out instead of writing its record anew.
 */
final class RedisRecordInspection {

	private final RedisConnectionFactory connectionFactory;

	private final RedisScriptRunner scripts;

	private final boolean lettuce;

	RedisRecordInspection(RedisConnectionFactory connectionFactory, RedisScriptRunner scripts) {
		this.connectionFactory = connectionFactory;
		this.scripts = scripts;
		this.lettuce = RedisClients.isLettuce(connectionFactory);
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

	/** {@code null} for none, or a tombstone. */
	static @Nullable IdempotencyRecord record(RecordKey key, @Nullable List<?> reply, Instant now) {
		Assert.state(reply != null && !reply.isEmpty(), "Empty reply from the inspect script");
		long kind = (Long) reply.get(0);
		if (kind == 0) {
			return null;
		}
		long pttl = (Long) reply.get(1);
		Duration expiresIn = (pttl >= 0) ? Duration.ofMillis(pttl) : null;
		if (kind != 1) {
			return IdempotencyRecord.unreadable(key, RedisScripts.notARecord(reply.get(2)), expiresIn);
		}
		byte[] stored = (byte[]) reply.get(2);
		if (RecordLayout.isTombstone(stored)) {
			return null;
		}
		String damage = RecordLayout.damage(stored);
		if (damage != null) {
			return IdempotencyRecord.unreadable(key, damage, expiresIn);
		}
		boolean inProgress = RecordLayout.isInProgress(stored);
		if (inProgress && expiresIn != null) {
			// The lease left, not the hour the placeholder is kept after it.
			expiresIn = Duration.ofMillis(RecordLayout.leaseMillis(pttl));
		}
		return new IdempotencyRecord(key,
				inProgress ? IdempotencyRecord.State.IN_PROGRESS : IdempotencyRecord.State.COMPLETED,
				RecordLayout.fingerprint(stored), RecordLayout.claimedAt(stored, now), expiresIn,
				inProgress ? null : new StoredResult(RecordLayout.result(stored)));
	}

	/**
	 * SCAN with a MATCH on the key prefix, then one read per key. Spring Data Redis's
	 * cursor cannot resume a scan from an earlier request's cursor: on Lettuce SCAN is
	 * sent natively ({@link LettuceScan}), on the other clients by the scan script.
	 */
	InProgressPage findInProgress(String keyPrefix, Duration olderThan, @Nullable String cursor, int limit) {
		byte[] pattern = (globEscape(keyPrefix) + ":*").getBytes(StandardCharsets.UTF_8);
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			ScanStep scanned = this.lettuce ? LettuceScan.scan(connection.getNativeConnection(), pattern, cursor, limit)
					: scanByScript(connection, pattern, cursor, limit);
			Instant now = Instant.now();
			List<IdempotencyRecord> records = new ArrayList<>();
			for (byte[] key : scanned.keys()) {
				IdempotencyRecord record = inspect(connection, new RecordKey(new String(key, StandardCharsets.UTF_8)),
						now);
				// An unreadable record may be a call in progress: listed at any age.
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
			return new InProgressPage(records, scanned.next());
		}
	}

	@SuppressWarnings("unchecked")
	private static ScanStep scanByScript(RedisConnection connection, byte[] pattern, @Nullable String cursor,
			int limit) {
		if (connection instanceof RedisClusterConnection) {
			throw new UnsupportedOperationException(
					"Finding the records in progress on Redis Cluster needs a LettuceConnectionFactory");
		}
		byte[] position = ((cursor != null) ? cursor : "0").getBytes(StandardCharsets.US_ASCII);
		List<Object> reply = RedisScriptRunner.executeWithoutKeys(connection, RedisScripts.SCAN, ReturnType.MULTI,
				position, pattern, Integer.toString(limit).getBytes(StandardCharsets.US_ASCII));
		Assert.state(reply != null && reply.size() == 2, "Unexpected reply from the scan script");
		String next = new String((byte[]) reply.get(0), StandardCharsets.US_ASCII);
		return new ScanStep((List<byte[]>) reply.get(1), next.equals("0") ? null : next);
	}

	record ScanStep(List<byte[]> keys, @Nullable String next) {
	}

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
