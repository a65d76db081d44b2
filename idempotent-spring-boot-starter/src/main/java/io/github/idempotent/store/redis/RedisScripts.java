package io.github.idempotent.store.redis;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

import org.jspecify.annotations.Nullable;

import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The store's Lua scripts, shipped as {@code .lua} files next to this class
 * ({@code io/github/idempotent/store/redis/*.lua}, a resource hint for native images in
 * {@code IdempotentRuntimeHints}), each read once and its SHA-1 computed once. A Redis
 * user can read and run them without Java ({@code redis-cli --eval claim.lua key , ...});
 * each file says what it reads, writes and answers.
 * <p>
 * What every script assumes: a record is one string ({@link RecordLayout}): byte 1 the
 * state, 'P' or 'p' in progress, 'C' or 'c' completed (upper or lower case: the form of
 * the fingerprint, which only the Java side reads), bytes 2-9 the owner's token. Java
 * builds the values the scripts write, so a script compares a state byte and a token and
 * writes or returns a value whole: GET and one SET (with PX) or PEXPIRE per call. The
 * only bytes a script reads or writes besides are the fixed-size end of a placeholder
 * (its attempt and claim times, 7 bytes after the fingerprint) and the 9 bytes of a
 * tombstone, when a key is taken over or deleted by an operator; the fingerprint's length
 * byte says where it ends.
 * <p>
 * A value of another Redis type than a string (a hash, a list) is no record at all: GET
 * on it fails with WRONGTYPE, caught by pcall, so a record costs no TYPE check; the claim
 * answers 6 and its type, and leaves it as it is, as it leaves a string it cannot read
 * (the Java side judges that): either may be what is left of a call that ran, or a record
 * of a later format. Complete, release and renew find such values fenced (0).
 */
final class RedisScripts {

	// What the claim script answers first.

	static final long ACQUIRED = 1;

	static final long IN_PROGRESS = 2;

	static final long COMPLETED = 3;

	static final long NOT_A_RECORD = 6;

	/** Claims a key in one step when the native claim cannot decide. */
	static final Script CLAIM = Script.load("claim.lua");

	/** Writes the completed record, fenced by the owner's token. */
	static final Script COMPLETE = Script.load("complete.lua");

	/**
	 * {@link #COMPLETE} flagged {@code allow-oom} (Redis 7.0 or later): for a completed
	 * record no bigger than the placeholder it replaces, which Redis refuses along with
	 * every other write once its memory is full, although it takes no more memory.
	 */
	static final Script COMPLETE_IN_FULL_MEMORY = COMPLETE.withFlags("allow-oom");

	/**
	 * Frees the key, fenced by the owner's token; a released takeover leaves a tombstone.
	 */
	static final Script RELEASE = Script.load("release.lua");

	/** Extends the lease, fenced by the owner's token. */
	static final Script RENEW = Script.load("renew.lua");

	/**
	 * For operators: deletes a record by its state, a placeholder leaving a tombstone.
	 */
	static final Script DELETE_IF = Script.load("delete-if.lua");

	/** For operators: reads a record whatever its type, with its PTTL. */
	static final Script INSPECT = Script.load("inspect.lua");

	/**
	 * For operators: one SCAN step, for the clients that cannot resume one (all but
	 * Lettuce).
	 */
	static final Script SCAN = Script.load("scan.lua");

	private RedisScripts() {
	}

	/**
	 * The damage of a key that holds a value of another Redis type than a string, named
	 * by the scripts' {@code TYPE}.
	 */
	static String notARecord(@Nullable Object type) {
		String name = (type instanceof byte[] bytes) ? new String(bytes, StandardCharsets.UTF_8) : String.valueOf(type);
		return "it is a Redis " + name + ", not a string (WRONGTYPE)";
	}

	/**
	 * A script's text and the SHA-1 that EVALSHA names it by.
	 */
	record Script(String name, byte[] text, String sha1) {

		/**
		 * Reads {@code name} next to this class, once, into bytes that every EVAL sends
		 * as they are: {@code RedisScript.of(Resource)} would take a lock and ask the
		 * resource whether it changed on every {@code getSha1()}, that is on every call.
		 */
		static Script load(String name) {
			ClassPathResource resource = new ClassPathResource(name, RedisScripts.class);
			byte[] text;
			try (InputStream in = resource.getInputStream()) {
				text = in.readAllBytes();
			}
			catch (IOException ex) {
				throw new IllegalStateException("The Redis script " + resource.getPath()
						+ " is missing from the class path: the idempotent starter's jar is incomplete", ex);
			}
			return of(name, text);
		}

		private static Script of(String name, byte[] text) {
			return new Script(name, text, RedisScript.of(new String(text, StandardCharsets.UTF_8)).getSha1());
		}

		/**
		 * This script with a shebang line that gives it {@code flags} (Redis 7.0 or
		 * later; before, the line does not compile).
		 */
		Script withFlags(String flags) {
			byte[] shebang = ("#!lua flags=" + flags + "\n").getBytes(StandardCharsets.UTF_8);
			byte[] flagged = new byte[shebang.length + this.text.length];
			System.arraycopy(shebang, 0, flagged, 0, shebang.length);
			System.arraycopy(this.text, 0, flagged, shebang.length, this.text.length);
			return of(this.name, flagged);
		}

	}

}
