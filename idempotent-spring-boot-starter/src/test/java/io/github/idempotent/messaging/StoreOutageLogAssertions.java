package io.github.idempotent.messaging;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the log of a listener application should look like after a store outage: a few
 * lines that say the store is unavailable and how many calls it refused, and no stack
 * trace for what is an expected condition, however many redeliveries the outage caused.
 */
public final class StoreOutageLogAssertions {

	private static final Pattern WARN_OR_ERROR = Pattern.compile("\\s(WARN|ERROR)\\s");

	private static final Pattern LOG_RECORD = Pattern.compile("\\s(TRACE|DEBUG|INFO|WARN|ERROR)\\s");

	/**
	 * Loggers of the Redis connection itself (Lettuce, the store's invalidation
	 * tracking): they log each change of the connection's state once, not per message.
	 */
	private static final Pattern CONNECTION_LOGGERS = Pattern
		.compile("(io\\.lettuce|i\\.l\\.core|i\\.n\\.u\\.c\\.|io\\.netty|i\\.g\\.i\\.store\\.redis)\\.?");

	private StoreOutageLogAssertions() {
	}

	/**
	 * @param log the output written from just before the outage until the messages ran
	 * @param outageSeconds about how long the outage lasted
	 */
	public static void assertOutageLoggedOncePerInterval(String log, int outageSeconds) {
		List<String> lines = log.lines().toList();
		List<String> warnings = lines.stream()
			.filter((line) -> WARN_OR_ERROR.matcher(line).find())
			.filter((line) -> !CONNECTION_LOGGERS.matcher(line).find())
			.toList();
		List<String> stackTrace = new ArrayList<>();
		boolean ofConnection = false;
		for (String line : lines) {
			if (line.startsWith("\tat ") || line.startsWith("Caused by: ")) {
				if (!ofConnection) {
					stackTrace.add(line);
				}
			}
			else if (LOG_RECORD.matcher(line).find()) {
				// The client's own (a notification refused by an event loop that another
				// context of the test JVM shut down) belong to the connection, as above.
				ofConnection = CONNECTION_LOGGERS.matcher(line).find();
			}
		}
		// One line when the outage starts, then at most one per 10 s window.
		int bound = outageSeconds / 10 + 2;
		assertThat(warnings).as("warnings and errors of the listener path during the outage")
			.hasSizeLessThanOrEqualTo(bound);
		assertThat(stackTrace).as("stack trace lines logged during the outage").isEmpty();
		assertThat(warnings).as("warnings and errors of the listener path during the outage")
			.anySatisfy((line) -> assertThat(line).contains("Idempotency store unavailable")
				.containsPattern("refused \\d+ calls? ")
				.doesNotContain("in progress"));
	}

}
