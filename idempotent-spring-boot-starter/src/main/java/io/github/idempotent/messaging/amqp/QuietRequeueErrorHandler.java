package io.github.idempotent.messaging.amqp;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.amqp.ImmediateRequeueAmqpException;
import org.springframework.amqp.rabbit.listener.ConditionalRejectingErrorHandler;
import org.springframework.util.Assert;
import org.springframework.util.ErrorHandler;

import io.github.idempotent.messaging.ListenerFailures;

/**
 * Error handler of a Rabbit listener container that lets the requeues of
 * {@link IdempotentRabbitListenerAdvice} pass without a log line, and hands every other
 * failure to the handler it wraps. A message refused because the store is unavailable, or
 * because a duplicate of it is still in progress, did not run and is requeued; the
 * container's default handler would log a warning with a stack trace for each redelivery,
 * every back-off, for as long as the outage lasts. The executor reports an outage
 * instead, in one line per interval that counts the refused calls.
 * <p>
 * Auto-configured on every listener container factory, around the error handler it had
 * (Spring AMQP's {@link ConditionalRejectingErrorHandler} when none).
 */
public class QuietRequeueErrorHandler implements ErrorHandler {

	private static final Log logger = LogFactory.getLog(QuietRequeueErrorHandler.class);

	private final ErrorHandler delegate;

	/**
	 * Around the container's default, a {@link ConditionalRejectingErrorHandler}.
	 */
	public QuietRequeueErrorHandler() {
		this(new ConditionalRejectingErrorHandler());
	}

	public QuietRequeueErrorHandler(ErrorHandler delegate) {
		Assert.notNull(delegate, "delegate must not be null");
		this.delegate = delegate;
	}

	@Override
	public void handleError(Throwable failure) {
		if (isRequeueOfIdempotent(failure)) {
			if (logger.isDebugEnabled()) {
				logger.debug("Requeued by @Idempotent: " + failure.getMessage());
			}
			return;
		}
		this.delegate.handleError(failure);
	}

	public ErrorHandler getDelegate() {
		return this.delegate;
	}

	private static boolean isRequeueOfIdempotent(Throwable failure) {
		boolean requeue = false;
		for (Throwable ex = failure; ex != null && ex.getCause() != ex; ex = ex.getCause()) {
			if (ex instanceof ImmediateRequeueAmqpException) {
				requeue = true;
				break;
			}
		}
		return requeue
				&& (ListenerFailures.storeUnavailable(failure) != null || ListenerFailures.inProgress(failure) != null);
	}

}
