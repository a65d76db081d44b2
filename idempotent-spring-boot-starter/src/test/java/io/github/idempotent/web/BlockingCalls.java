package io.github.idempotent.web;

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;

import reactor.blockhound.BlockHound;

/**
 * Blocking calls made on threads that must never block (Reactor's non-blocking
 * schedulers, Netty's event loops: the server's and the Redis client's), as
 * <a href="https://github.com/reactor/BlockHound">BlockHound</a> sees them: a thread
 * parked, waiting on a monitor, sleeping, or reading a socket. BlockHound is installed
 * once per JVM and stays; it records instead of throwing, and only while a test has
 * {@link #start() started} recording, so that the other tests of the run, which may block
 * where they like, are not changed.
 */
final class BlockingCalls {

	private static final List<String> recorded = new CopyOnWriteArrayList<>();

	private static volatile boolean recording;

	private static boolean installed;

	private BlockingCalls() {
	}

	/**
	 * Installs BlockHound if this JVM has not yet, and starts recording afresh.
	 */
	static synchronized void start() {
		if (!installed) {
			BlockHound.install((builder) -> builder.blockingMethodCallback((method) -> {
				if (recording) {
					recorded.add(Thread.currentThread().getName() + ": " + method + "\n" + stack());
				}
			}));
			installed = true;
		}
		recorded.clear();
		recording = true;
	}

	static void stop() {
		recording = false;
	}

	/**
	 * What the starter or the application blocked on (each with its stack): calls inside
	 * the logging framework, which writes to a file or the console, are not this
	 * project's.
	 */
	static List<String> ofTheStarter() {
		return recorded.stream()
			.filter((call) -> call.contains("io.github.idempotent") && !call.contains("ch.qos.logback"))
			.toList();
	}

	private static String stack() {
		return Arrays.stream(Thread.currentThread().getStackTrace())
			.filter((frame) -> !frame.getClassName().startsWith(BlockingCalls.class.getName())
					&& !frame.getClassName().startsWith("reactor.blockhound"))
			.map((frame) -> "\tat " + frame)
			.collect(Collectors.joining("\n"));
	}

}
