package io.github.idempotent.messaging.amqp;

import java.time.Duration;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.amqp.AmqpRejectAndDontRequeueException;
import org.springframework.amqp.ImmediateRequeueAmqpException;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.support.ListenerExecutionFailedException;
import org.springframework.util.Assert;

import io.github.idempotent.core.IdempotencyException;
import io.github.idempotent.core.IdempotencyStoreUnavailableException;
import io.github.idempotent.messaging.ListenerFailures;

/**
 * Advice for the advice chain of a Rabbit listener container, first in the chain: binds
 * the message being handled to the listener's thread (for
 * {@link RabbitMessageKeyResolver}) and turns the refusals of {@code @Idempotent} into
 * the container's requeue decisions, whatever error handler and retry recoverer the
 * application uses:
 * <ul>
 * <li>in progress (a duplicate of a message still being processed): requeued after
 * {@code inProgressBackOff}, even when a retry interceptor inside the chain has given up
 * and its recoverer rejected it, so that it is never dead-lettered for that alone;
 * <li>store unavailable ({@code failure-mode=closed}): requeued after the same back-off,
 * the listener did not run;
 * <li>key reused with another payload, no key, a payload that cannot be fingerprinted:
 * rejected without requeue, so the message goes to the queue's dead-letter exchange at
 * once instead of coming back forever.
 * </ul>
 */
public class IdempotentRabbitListenerAdvice implements MethodInterceptor {

	private static final Log logger = LogFactory.getLog(IdempotentRabbitListenerAdvice.class);

	private final Duration inProgressBackOff;

	public IdempotentRabbitListenerAdvice(Duration inProgressBackOff) {
		Assert.notNull(inProgressBackOff, "inProgressBackOff must not be null");
		Assert.isTrue(!inProgressBackOff.isNegative(), "inProgressBackOff must not be negative");
		this.inProgressBackOff = inProgressBackOff;
	}

	@Override
	public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
		// ContainerDelegate.invokeListener(Channel, Object data): one Message, or a List
		// of them for a batch listener, which has no single key.
		Object[] arguments = invocation.getArguments();
		Message message = (arguments.length == 2 && arguments[1] instanceof Message one) ? one : null;
		Message previous = RabbitMessageKeyResolver.bind(message);
		try {
			return invocation.proceed();
		}
		catch (Throwable ex) {
			throw translate(ex, message);
		}
		finally {
			RabbitMessageKeyResolver.bind(previous);
		}
	}

	private Throwable translate(Throwable failure, @Nullable Message message) {
		Exception fatal = ListenerFailures.notRetryable(failure);
		if (fatal != null) {
			return new ListenerExecutionFailedException(
					"Not retryable, rejected to the dead-letter exchange: " + fatal.getMessage(),
					new Rejected(fatal.getMessage(), fatal), messages(message));
		}
		IdempotencyException requeued = ListenerFailures.notRun(failure);
		if (requeued != null) {
			boolean outage = requeued instanceof IdempotencyStoreUnavailableException;
			// Not run, so requeued, after a back-off rather than at once in a loop. At
			// debug: an outage refuses every redelivery, and the executor reports it in
			// one warning per interval with a count; a duplicate in progress is normal.
			String reason = outage ? "Idempotency store unavailable, requeued: "
					: "Duplicate still in progress, requeued: ";
			if (logger.isDebugEnabled()) {
				logger.debug(reason + "in " + this.inProgressBackOff.toMillis() + " ms: " + requeued.getMessage());
			}
			backOff();
			// ImmediateRequeueAmqpException outranks a recoverer's "reject and don't
			// requeue" and a container's defaultRequeueRejected=false.
			return new ListenerExecutionFailedException(reason + requeued.getMessage(),
					new Requeued(requeued.getMessage(), requeued), messages(message));
		}
		return failure;
	}

	/**
	 * The advice's requeue, which {@link QuietRequeueErrorHandler} does not log.
	 */
	static final class Requeued extends ImmediateRequeueAmqpException {

		Requeued(String message, Throwable cause) {
			super(message, cause);
		}

	}

	/**
	 * The advice's rejection, which {@link QuietRequeueErrorHandler} logs in one line.
	 */
	static final class Rejected extends AmqpRejectAndDontRequeueException {

		Rejected(String message, Throwable cause) {
			super(message, cause);
		}

	}

	/**
	 * Holds the consumer back before the requeue: the broker would otherwise hand the
	 * duplicate straight back, in a loop, while the first delivery is being processed.
	 */
	private void backOff() {
		if (this.inProgressBackOff.isZero()) {
			return;
		}
		try {
			Thread.sleep(this.inProgressBackOff.toMillis());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private static Message[] messages(@Nullable Message message) {
		return (message != null) ? new Message[] { message } : new Message[0];
	}

}
