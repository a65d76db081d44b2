package io.github.idempotent.store.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.RedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.data.redis.serializer.RedisSerializer;
import org.springframework.util.Assert;

import io.github.idempotent.core.Fingerprint;
import io.github.idempotent.core.IdempotencyKey;
import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.OwnerToken;
import io.github.idempotent.store.StoredResult;

/**
 * {@link IdempotencyStore} on Redis. A record is one hash under one key ({@code s}: state
 * {@code P} or {@code C}, {@code t}: owner token while in progress, {@code f}:
 * fingerprint, {@code r}: result), and every primitive is one Lua script, so each is
 * atomic and costs one round trip (EVALSHA): a first call costs two, a replay one.
 * Scripts touch only their own key, so they run on Redis Cluster; expiry is the server's
 * (PEXPIRE): the lease while in progress, the TTL once completed.
 */
public class RedisIdempotencyStore implements IdempotencyStore {

	private final RedisTemplate<byte[], byte[]> redis;

	public RedisIdempotencyStore(RedisConnectionFactory connectionFactory) {
		Assert.notNull(connectionFactory, "connectionFactory must not be null");
		RedisTemplate<byte[], byte[]> template = new RedisTemplate<>();
		template.setConnectionFactory(connectionFactory);
		template.setEnableDefaultSerializer(false);
		template.setKeySerializer(RedisSerializer.byteArray());
		template.setValueSerializer(RedisSerializer.byteArray());
		template.afterPropertiesSet();
		this.redis = template;
	}

	@Override
	public ClaimResult claim(IdempotencyKey key, Fingerprint fingerprint, Duration lease) {
		String token = OwnerToken.generate();
		List<?> reply = this.redis.execute(Scripts.CLAIM, keyOf(key), utf8(token), utf8(fingerprint.value()),
				millis(lease));
		Assert.state(reply != null && !reply.isEmpty(), "Empty reply from the claim script");
		long state = (Long) reply.get(0);
		if (state == Scripts.ACQUIRED) {
			return new ClaimResult.Acquired(token);
		}
		Fingerprint stored = new Fingerprint(new String((byte[]) reply.get(1), StandardCharsets.UTF_8));
		if (state == Scripts.IN_PROGRESS) {
			return new ClaimResult.InProgress(stored, Duration.ofMillis(Math.max(0, (Long) reply.get(2))));
		}
		return new ClaimResult.Completed(stored, new StoredResult((byte[]) reply.get(2)));
	}

	@Override
	public boolean complete(IdempotencyKey key, String token, StoredResult result, Duration ttl) {
		return isOne(this.redis.execute(Scripts.COMPLETE, keyOf(key), utf8(token), result.bytes(), millis(ttl)));
	}

	@Override
	public boolean release(IdempotencyKey key, String token) {
		return isOne(this.redis.execute(Scripts.RELEASE, keyOf(key), utf8(token)));
	}

	@Override
	public boolean renew(IdempotencyKey key, String token, Duration lease) {
		return isOne(this.redis.execute(Scripts.RENEW, keyOf(key), utf8(token), millis(lease)));
	}

	private static List<byte[]> keyOf(IdempotencyKey key) {
		return List.of(utf8(key.value()));
	}

	private static byte[] utf8(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	private static byte[] millis(Duration duration) {
		return utf8(Long.toString(Math.max(1, duration.toMillis())));
	}

	private static boolean isOne(Long reply) {
		return reply != null && reply == 1L;
	}

	/**
	 * The Lua scripts, loaded once; Spring Data Redis sends them by SHA (EVALSHA) and
	 * falls back to EVAL once when the server does not know them yet.
	 */
	static final class Scripts {

		static final long ACQUIRED = 1;

		static final long IN_PROGRESS = 2;

		@SuppressWarnings("rawtypes")
		static final RedisScript<List> CLAIM = RedisScript.of("""
				local r = redis.call('HMGET', KEYS[1], 's', 'f', 'r')
				if not r[1] then
				  redis.call('HSET', KEYS[1], 's', 'P', 't', ARGV[1], 'f', ARGV[2])
				  redis.call('PEXPIRE', KEYS[1], ARGV[3])
				  return {1}
				end
				if r[1] == 'P' then
				  return {2, r[2], redis.call('PTTL', KEYS[1])}
				end
				return {3, r[2], r[3]}
				""", List.class);

		// Fencing: only the holder of the token may complete, release or renew; a
		// completed record has no token left, so it can never be overwritten.
		static final RedisScript<Long> COMPLETE = RedisScript.of("""
				if redis.call('HGET', KEYS[1], 't') == ARGV[1] then
				  redis.call('HSET', KEYS[1], 's', 'C', 'r', ARGV[2])
				  redis.call('HDEL', KEYS[1], 't')
				  redis.call('PEXPIRE', KEYS[1], ARGV[3])
				  return 1
				end
				return 0
				""", Long.class);

		static final RedisScript<Long> RELEASE = RedisScript.of("""
				if redis.call('HGET', KEYS[1], 't') == ARGV[1] then
				  redis.call('DEL', KEYS[1])
				  return 1
				end
				return 0
				""", Long.class);

		static final RedisScript<Long> RENEW = RedisScript.of("""
				if redis.call('HGET', KEYS[1], 't') == ARGV[1] then
				  redis.call('PEXPIRE', KEYS[1], ARGV[2])
				  return 1
				end
				return 0
				""", Long.class);

		private Scripts() {
		}

	}

}
