package io.github.idempotent.core;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Supplier;

/** What the asynchronous steps of the protocol do with futures and executors. */
final class Futures {

	private Futures() {
	}

	/**
	 * The stage {@code operation} returns, or a failed one if it throws instead: a store
	 * client may refuse a call before it has a future to fail.
	 */
	static <T> CompletableFuture<T> call(Supplier<CompletionStage<T>> operation) {
		try {
			return operation.get().toCompletableFuture();
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/** The failure a future completed with, without the completion stages' wrappers. */
	static Throwable unwrap(Throwable failure) {
		Throwable ex = failure;
		while ((ex instanceof CompletionException || ex instanceof ExecutionException) && ex.getCause() != null) {
			ex = ex.getCause();
		}
		return ex;
	}

	/** {@code executor}, or {@code onceRejected} for a task it rejects (at shutdown). */
	static Executor orElse(Executor executor, Executor onceRejected) {
		return (task) -> {
			try {
				executor.execute(task);
			}
			catch (RejectedExecutionException ex) {
				onceRejected.execute(task);
			}
		};
	}

}
