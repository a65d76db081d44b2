package io.github.idempotent.messaging.amqp;

import org.springframework.amqp.rabbit.listener.ConditionalRejectingErrorHandler;

import io.github.idempotent.messaging.ListenerFailures;

/**
 * {@code FatalExceptionStrategy} for applications that configure their own
 * {@link ConditionalRejectingErrorHandler}: Spring AMQP's default classification, plus
 * the refusals of {@code @Idempotent} that no redelivery can fix (key reused with another
 * payload, missing or malformed key, payload that cannot be fingerprinted). A duplicate
 * still in progress stays retryable. <pre class="code">
 * factory.setErrorHandler(new ConditionalRejectingErrorHandler(new IdempotencyFatalExceptionStrategy()));
 * </pre> Containers built by Spring Boot need none of this: the auto-configured
 * {@link IdempotentRabbitListenerAdvice} classifies these failures already.
 */
public class IdempotencyFatalExceptionStrategy extends ConditionalRejectingErrorHandler.DefaultExceptionStrategy {

	@Override
	protected boolean isUserCauseFatal(Throwable cause) {
		return ListenerFailures.notRetryable(cause) != null || super.isUserCauseFatal(cause);
	}

}
