package io.github.idempotent.test;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.springframework.util.Assert;

/**
 * One request to an {@code @Idempotent} endpoint, ready to be sent more than once with
 * the same key. Created by {@link IdempotencyTester}.
 *
 * @param <R> how the test describes a request to its client
 */
public final class IdempotentRequest<R> {

	/**
	 * How long one duplicate may take before the test fails rather than hangs: a bound on
	 * a deadlock, not a measurement.
	 */
	private static final long RESPONSE_TIMEOUT_SECONDS = 60;

	private final Exchange<R> exchange;

	private final R request;

	private final RecordingIdempotencyObserver calls;

	private final String replayedHeader;

	private String key = UUID.randomUUID().toString();

	IdempotentRequest(Exchange<R> exchange, R request, RecordingIdempotencyObserver calls, String replayedHeader) {
		Assert.notNull(request, "request must not be null");
		this.exchange = exchange;
		this.request = request;
		this.calls = calls;
		this.replayedHeader = replayedHeader;
	}

	/**
	 * Send the request with this key rather than a fresh one (a request that names its
	 * own key header keeps it).
	 */
	public IdempotentRequest<R> withKey(String key) {
		Assert.hasText(key, "key must not be empty");
		this.key = key;
		return this;
	}

	/**
	 * Send {@code count} duplicates at once, from as many threads released together, then
	 * one more after they have all been answered, which finds the first call completed.
	 * @param count how many duplicates race, at least 2
	 */
	public DuplicateResponses sentConcurrently(int count) {
		Assert.isTrue(count >= 2, "count must be at least 2");
		int executionsBefore = this.calls.executions();
		List<ExchangedResponse> responses = new ArrayList<>(race(count));
		responses.add(this.exchange.send(this.request, this.key));
		return new DuplicateResponses(responses, this.calls.executions() - executionsBefore, this.replayedHeader);
	}

	/**
	 * Send the request, then {@code other} with the same key: a different payload, which
	 * the starter refuses with {@code 422}.
	 */
	public KeyReuse keyReusedBy(R other) {
		Assert.notNull(other, "other must not be null");
		int executionsBefore = this.calls.executions();
		ExchangedResponse first = this.exchange.send(this.request, this.key);
		ExchangedResponse reuse = this.exchange.send(other, this.key);
		return new KeyReuse(first, reuse, this.calls.executions() - executionsBefore, this.replayedHeader);
	}

	private List<ExchangedResponse> race(int count) {
		ExecutorService threads = Executors.newFixedThreadPool(count);
		try {
			CountDownLatch start = new CountDownLatch(1);
			List<Future<ExchangedResponse>> sent = new ArrayList<>();
			for (int i = 0; i < count; i++) {
				sent.add(threads.submit(() -> {
					start.await();
					return this.exchange.send(this.request, this.key);
				}));
			}
			start.countDown();
			List<ExchangedResponse> responses = new ArrayList<>();
			for (Future<ExchangedResponse> response : sent) {
				responses.add(response.get(RESPONSE_TIMEOUT_SECONDS, TimeUnit.SECONDS));
			}
			return responses;
		}
		catch (ExecutionException ex) {
			throw new IllegalStateException("A duplicate could not be sent", ex.getCause());
		}
		catch (TimeoutException ex) {
			throw new IllegalStateException(
					"A duplicate had no answer within " + RESPONSE_TIMEOUT_SECONDS + " s: is the endpoint blocked?",
					ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while sending duplicates", ex);
		}
		finally {
			threads.shutdownNow();
		}
	}

}
