package io.github.idempotent.store.redis;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

import org.jspecify.annotations.Nullable;

import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The store's Lua scripts, shipped as {@code .lua} files next to this class, each read
 * and hashed once; each file says what it reads, writes and answers. Java builds the
 * values the scripts write: a script compares a state byte and a token (bytes 1-9) and
 * writes or returns a value whole. A value of another Redis type fails GET with
 * WRONGTYPE, caught by pcall, so a record costs no TYPE check.
 */
final class RedisScripts {

	// What the claim script answers first, besides 2 (in progress) and 3 (a value).

	static final long ACQUIRED = 1;

	static final long NOT_A_RECORD = 6;

	static final Script CLAIM = Script.load("claim.lua");

	static final Script COMPLETE = Script.load("complete.lua");

	/**
	 * {@link #COMPLETE} flagged {@code allow-oom} (Redis 7.0+), for a completed record no
	 * bigger than the placeholder it replaces.
	 */
	static final Script COMPLETE_IN_FULL_MEMORY = COMPLETE.withFlags("allow-oom");

	static final Script RELEASE = Script.load("release.lua");

	static final Script RENEW = Script.load("renew.lua");

	static final Script DELETE_IF = Script.load("delete-if.lua");

	static final Script INSPECT = Script.load("inspect.lua");

	static final Script SCAN = Script.load("scan.lua");

	private RedisScripts() {
	}

	/** The damage of a key that holds another Redis type than a string. */
	static String notARecord(@Nullable Object type) {
		String name = (type instanceof byte[] bytes) ? new String(bytes, StandardCharsets.UTF_8) : String.valueOf(type);
		return "it is a Redis " + name + ", not a string (WRONGTYPE)";
	}

	record Script(String name, byte[] text, String sha1) {

		/**
		 * Read once: {@code RedisScript.of(Resource)} would take a lock and check the
		 * resource on every {@code getSha1()}, that is on every call.
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

		/** With a shebang line that gives it {@code flags} (Redis 7.0 or later). */
		Script withFlags(String flags) {
			String flagged = "#!lua flags=" + flags + "\n" + new String(this.text, StandardCharsets.UTF_8);
			return of(this.name, flagged.getBytes(StandardCharsets.UTF_8));
		}

	}

}
