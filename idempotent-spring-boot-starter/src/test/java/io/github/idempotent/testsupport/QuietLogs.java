package io.github.idempotent.testsupport;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import org.slf4j.LoggerFactory;

/**
 * The library's log turned off while a test makes it warn on purpose thousands of times
 * (generated bad input, explored schedules), so that the build's console shows what the
 * test says, not one warning per try.
 */
public final class QuietLogs implements AutoCloseable {

	private final Logger logger;

	private final Level previous;

	private QuietLogs(Logger logger) {
		this.logger = logger;
		this.previous = logger.getLevel();
		logger.setLevel(Level.OFF);
	}

	public static QuietLogs ofTheLibrary() {
		return new QuietLogs((Logger) LoggerFactory.getLogger("io.github.idempotent"));
	}

	@Override
	public void close() {
		this.logger.setLevel(this.previous);
	}

}
