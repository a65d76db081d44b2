package io.github.idempotent.web;

import java.util.List;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.core.Ordered;
import org.springframework.web.method.HandlerMethod;

import io.github.idempotent.core.IdempotentOperation;
import io.github.idempotent.core.IdempotencyExecutor;

/**
 * What the Spring MVC and WebFlux handler adapters share, ahead of the framework's
 * adapter {@code D} they delegate to: which handlers they guard, the key a request sends.
 */
abstract class GuardingHandlerAdapter<D> implements Ordered {

	private final ObjectProvider<D> delegate;

	final IdempotencyExecutor executor;

	final WebContract contract;

	GuardingHandlerAdapter(ObjectProvider<D> delegate, IdempotencyExecutor executor, WebContract contract) {
		this.delegate = delegate;
		this.executor = executor;
		this.contract = contract;
	}

	public boolean supports(Object handler) {
		return handler instanceof HandlerMethod method && this.contract.mayGuard(this.executor, method);
	}

	@Nullable String key(IdempotentOperation operation, Function<String, List<String>> headerLines) {
		return IdempotencyKeyHeader.read(this.contract.headers.keyHeader(), operation, headerLines);
	}

	D delegate() {
		return this.delegate.getObject();
	}

	// The framework's own adapters take any handler method.
	@Override
	public int getOrder() {
		return Ordered.HIGHEST_PRECEDENCE;
	}

}
