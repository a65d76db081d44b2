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
import io.github.idempotent.core.AsyncListenerFailures;
import io.github.idempotent.core.IdempotencyStoreUnavailableException;

/**
 * Advice first in a Rabbit listener container's chain: binds the message to the
 * listener's thread (for {@link RabbitMessageKeyResolver}) and turns the refusals of
 * {@code @Idempotent} into requeue decisions, whatever error handler and recoverer the
 * application uses. A duplicate in progress or a store outage is requeued after
 * {@code inProgressBackOff}; what no redelivery can fix is rejected without requeue.
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
		// One Message, or a List for a batch listener, which has no single key.
		Object[] arguments = invocation.getArguments();
		Message message = (arguments.length == 2 && arguments[1] instanceof Message one) ? one : null;
		Message previous = RabbitMessageKeyResolver.bind(message);
		// A listener that returns a future or a Mono is acknowledged when it completes,
		// past this advice and the error handler: its failure must say it.
		AsyncListenerFailures.Translation previousFailures = AsyncListenerFailures
			.bind((message != null) ? new AsyncListenerFailures.Translation(
					(failure) -> translate(failure, message, false), this.inProgressBackOff) : null);
		try {
			return invocation.proceed();
		}
		catch (Throwable ex) {
			throw translate(ex, message, true);
		}
		finally {
			AsyncListenerFailures.bind(previousFailures);
			RabbitMessageKeyResolver.bind(previous);
		}
	}

	/**
	 * The requeue decision, carried in the failure itself. {@code backOff}: sleep before
	 * a requeue, on a listener's own thread only (AsyncListenerFailures holds an
	 * asynchronous failure back without one).
	 */
	private Throwable translate(Throwable failure, @Nullable Message message, boolean backOff) {
		Message[] messages = (message != null) ? new Message[] { message } : new Message[0];
		RuntimeException fatal = IdempotencyException.findNotRetryable(failure);
		if (fatal != null) {
			return new ListenerExecutionFailedException(
					"Not retryable, rejected to the dead-letter exchange: " + fatal.getMessage(),
					new Rejected(fatal.getMessage(), fatal), messages);
		}
		IdempotencyException requeued = IdempotencyException.findRetryable(failure);
		if (requeued == null) {
			return failure;
		}
		// At debug: the executor reports an outage once per interval with a count.
		String reason = (requeued instanceof IdempotencyStoreUnavailableException)
				? "Idempotency store unavailable, requeued: " : "Duplicate still in progress, requeued: ";
		logger.debug(
				reason + (backOff ? "in " + this.inProgressBackOff.toMillis() + " ms: " : "") + requeued.getMessage());
		// The broker would otherwise hand the duplicate straight back, in a loop.
		if (backOff && !this.inProgressBackOff.isZero()) {
			try {
				Thread.sleep(this.inProgressBackOff.toMillis());
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
		// ImmediateRequeueAmqpException outranks a recoverer's "reject and don't requeue"
		// and a container's defaultRequeueRejected=false.
		return new ListenerExecutionFailedException(reason + requeued.getMessage(),
				new Requeued(requeued.getMessage(), requeued), messages);
	}

	/** The advice's requeue, which {@link QuietRequeueErrorHandler} does not log. */
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

}
