package io.github.idempotent.store.redis;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.beans.factory.aot.AotServices;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.idempotent.store.redis.RedisScripts.Script;
import io.github.idempotent.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.aot.hint.predicate.RuntimeHintsPredicates.resource;

/**
 * The {@code .lua} files the store ships: each is read once, named by the SHA-1 that the
 * server itself gives it (so that EVALSHA finds what SCRIPT LOAD or the first EVAL
 * cached), and reachable in a native image.
 */
class RedisScriptsTests {

	private static LettuceConnectionFactory connectionFactory;

	@BeforeAll
	static void connect() {
		connectionFactory = TestRedis.connectionFactory();
	}

	@AfterAll
	static void disconnect() {
		connectionFactory.destroy();
	}

	@Test
	void everyScriptIsNamedByTheSha1RedisComputes() {
		try (RedisConnection connection = connectionFactory.getConnection()) {
			for (Script script : scripts()) {
				assertThat(connection.scriptingCommands().scriptLoad(script.text())).as(script.name())
					.isEqualTo(script.sha1());
			}
		}
	}

	@Test
	void everyScriptIsTheFileOfItsName() throws Exception {
		for (Script script : scripts()) {
			try (var in = RedisScripts.class.getResourceAsStream(script.name())) {
				assertThat(in).as(script.name()).isNotNull();
				// A script flagged for Redis 7 is its file behind a shebang line.
				assertThat(new String(script.text(), StandardCharsets.UTF_8).replaceFirst("^#!lua flags=[a-z-]+\n", ""))
					.as(script.name())
					.isEqualTo(new String(in.readAllBytes(), StandardCharsets.UTF_8));
			}
		}
	}

	@Test
	void everyScriptIsANativeImageResource() {
		RuntimeHints hints = new RuntimeHints();
		// Through aot.factories, as Spring's AOT processing finds the starter's hints.
		AotServices.factories()
			.load(RuntimeHintsRegistrar.class)
			.forEach((registrar) -> registrar.registerHints(hints, getClass().getClassLoader()));
		for (Script script : scripts()) {
			assertThat(resource().forResource("io/github/idempotent/store/redis/" + script.name())).as(script.name())
				.accepts(hints);
		}
	}

	/**
	 * Every script constant, found by reflection so that a script added later is checked
	 * too.
	 */
	private static List<Script> scripts() {
		List<Script> scripts = new ArrayList<>();
		for (Field field : RedisScripts.class.getDeclaredFields()) {
			if (Modifier.isStatic(field.getModifiers()) && field.getType() == Script.class) {
				try {
					scripts.add((Script) field.get(null));
				}
				catch (IllegalAccessException ex) {
					throw new IllegalStateException(ex);
				}
			}
		}
		assertThat(scripts).hasSize(8);
		return scripts;
	}

}
