package io.github.idempotent.autoconfigure;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.ApplicationContext;
import org.springframework.context.ApplicationContextAware;
import org.springframework.context.ApplicationListener;
import org.springframework.context.event.ContextClosedEvent;

import io.github.idempotent.core.IdempotencyExecutor;

/**
 * On shutdown, ends duplicates waiting for a call in progress with 503, before the web
 * server's graceful shutdown would wait for them and the store stops.
 */
class StopWaitingOnClose implements ApplicationListener<ContextClosedEvent>, ApplicationContextAware {

	private final ObjectProvider<IdempotencyExecutor> executor;

	private ApplicationContext context;

	StopWaitingOnClose(ObjectProvider<IdempotencyExecutor> executor) {
		this.executor = executor;
	}

	@Override
	public void setApplicationContext(ApplicationContext context) {
		this.context = context;
	}

	@Override
	public void onApplicationEvent(ContextClosedEvent event) {
		// A child context (the management server's) closing is not this application's.
		if (event.getApplicationContext() == this.context) {
			this.executor.ifAvailable(IdempotencyExecutor::stopWaiting);
		}
	}

}
