package io.github.idempotent.messaging.amqp;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.listener.ConditionalRejectingErrorHandler;
import org.springframework.amqp.rabbit.support.ListenerExecutionFailedException;
import org.springframework.util.Assert;
import org.springframework.util.ErrorHandler;

/**
 * Error handler of a Rabbit listener container that lets the requeues of
 * {@link IdempotentRabbitListenerAdvice} pass without a log line (the default would log a
 * stack trace per redelivery for as long as an outage lasts), logs its rejections in one
 * line, and hands every other failure to the handler it wraps.
 */
public class QuietRequeueErrorHandler implements ErrorHandler {

	private static final Log logger = LogFactory.getLog(QuietRequeueErrorHandler.class);

	private final ErrorHandler delegate;

	/** Around a {@link ConditionalRejectingErrorHandler}. */
	public QuietRequeueErrorHandler() {
		this(new ConditionalRejectingErrorHandler());
	}

	public QuietRequeueErrorHandler(ErrorHandler delegate) {
		Assert.notNull(delegate, "delegate must not be null");
		this.delegate = delegate;
	}

	@Override
	public void handleError(Throwable failure) {
		for (Throwable ex = failure; ex != null; ex = ex.getCause()) {
			if (ex instanceof IdempotentRabbitListenerAdvice.Requeued) {
				logger.debug("Requeued by @Idempotent: " + failure.getMessage());
				return;
			}
			if (ex instanceof IdempotentRabbitListenerAdvice.Rejected rejected) {
				// Expected of a client that reused a key or sent none: one line.
				logger.warn(describe(failure) + " rejected without requeue, to the queue's dead-letter exchange if it "
						+ "has one: " + rejected.getCause().getMessage());
				return;
			}
		}
		this.delegate.handleError(failure);
	}

	public ErrorHandler getDelegate() {
		return this.delegate;
	}

	private static String describe(Throwable failure) {
		if (!(failure instanceof ListenerExecutionFailedException listener) || listener.getFailedMessage() == null) {
			return "A message";
		}
		MessageProperties properties = listener.getFailedMessage().getMessageProperties();
		String id = (properties.getMessageId() != null) ? "Message " + properties.getMessageId()
				: "A message without a message id";
		return (properties.getConsumerQueue() != null) ? id + " from queue " + properties.getConsumerQueue() : id;
	}

}
