package io.github.idempotent.messaging.amqp;

import org.springframework.amqp.rabbit.listener.ConditionalRejectingErrorHandler;

import io.github.idempotent.core.IdempotencyException;

/**
 * {@code FatalExceptionStrategy} for applications that configure their own
 * {@link ConditionalRejectingErrorHandler}: Spring AMQP's default classification plus the
 * refusals of {@code @Idempotent} that no redelivery can fix. Containers built by Spring
 * Boot need none: {@link IdempotentRabbitListenerAdvice} classifies them already.
 */
public class IdempotencyFatalExceptionStrategy extends ConditionalRejectingErrorHandler.DefaultExceptionStrategy {

	@Override
	protected boolean isUserCauseFatal(Throwable cause) {
		return IdempotencyException.findNotRetryable(cause) != null || super.isUserCauseFatal(cause);
	}

}
