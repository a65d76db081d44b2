package smoketest.storm;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A storm of duplicates: many identical requests with one idempotency key, sent at once,
 * while the application holds the one call that runs. Every other copy overlaps that
 * call, so each must be refused as in progress (409 with {@code Retry-After}); once the
 * application lets the call finish, every further copy must be an identical replay of its
 * answer. The test counts the executions in the application itself.
 */
public final class HttpStorm {

	/**
	 * Bounds a wait on the application, so that a broken one fails the test instead of
	 * hanging the build; never a measure of speed.
	 */
	private static final long HANG_MINUTES = 2;

	private final List<CompletableFuture<HttpResponse<String>>> responses = new ArrayList<>();

	/**
	 * Counts the answers down to the one the held call owes.
	 */
	private final CountDownLatch allButOne;

	private HttpStorm(HttpClient client, HttpRequest request, int size) {
		this.allButOne = new CountDownLatch(size - 1);
		for (int i = 0; i < size; i++) {
			CompletableFuture<HttpResponse<String>> response = client.sendAsync(request,
					HttpResponse.BodyHandlers.ofString());
			response.whenComplete((answer, failure) -> this.allButOne.countDown());
			this.responses.add(response);
		}
	}

	/**
	 * A JSON POST to {@code path} on the application at {@code port} with
	 * {@code Idempotency-Key: key}, and an {@code Authorization} header when
	 * {@code authorization} is not {@code null}.
	 */
	public static HttpRequest post(int port, String path, String key, String body, String authorization) {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
			.header("Content-Type", "application/json")
			.header("Idempotency-Key", key)
			.POST(HttpRequest.BodyPublishers.ofString(body));
		if (authorization != null) {
			request.header("Authorization", authorization);
		}
		return request.build();
	}

	/**
	 * The {@code Authorization} header of HTTP Basic authentication.
	 */
	public static String basic(String user, String password) {
		return "Basic " + Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
	}

	/**
	 * Sends {@code size} copies of each of {@code requests} at once, all while the
	 * application holds the calls that run; checks that every copy but one of each is
	 * refused as in progress; then {@code release}s the held calls, and checks that each
	 * answers a success and that {@code size} more copies of each are identical replays.
	 * @return the first answer to each request, in order
	 */
	public static List<HttpResponse<String>> run(int size, Runnable release, HttpRequest... requests) throws Exception {
		HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
		List<HttpStorm> storms = new ArrayList<>();
		for (HttpRequest request : requests) {
			storms.add(new HttpStorm(client, request, size));
		}
		try {
			for (HttpStorm storm : storms) {
				storm.awaitRefusals();
			}
		}
		finally {
			release.run();
		}
		List<HttpResponse<String>> firsts = new ArrayList<>();
		for (HttpStorm storm : storms) {
			firsts.add(storm.awaitFirst());
		}
		for (int i = 0; i < requests.length; i++) {
			new HttpStorm(client, requests[i], size).awaitReplaysOf(firsts.get(i));
		}
		return firsts;
	}

	private void awaitRefusals() throws InterruptedException {
		check(this.allButOne.await(HANG_MINUTES, TimeUnit.MINUTES), "Only " + answered().size() + " of "
				+ (this.responses.size() - 1) + " duplicates were answered while the first call ran");
		for (HttpResponse<String> refused : answered()) {
			check(refused.statusCode() == 409 && refused.headers().firstValue("Retry-After").isPresent(),
					"A duplicate that overlapped the first call got " + describe(refused)
							+ " instead of 409 with Retry-After");
		}
	}

	private HttpResponse<String> awaitFirst() throws Exception {
		List<HttpResponse<String>> first = awaitAll().stream()
			.filter((response) -> response.statusCode() != 409)
			.toList();
		check(first.size() == 1,
				"Expected one answer that is not 409, got " + first.stream().map(HttpStorm::describe).toList());
		HttpResponse<String> response = first.get(0);
		check(response.statusCode() / 100 == 2 && response.headers().firstValue("Idempotent-Replayed").isEmpty(),
				"The call that ran answered " + describe(response));
		return response;
	}

	private void awaitReplaysOf(HttpResponse<String> first) throws Exception {
		for (HttpResponse<String> replay : awaitAll()) {
			check(replay.statusCode() == first.statusCode() && replay.body().equals(first.body())
					&& Objects.equals(contentType(replay), contentType(first))
					&& replay.headers().firstValue("Idempotent-Replayed").equals(Optional.of("true")),
					"A duplicate after the first call got " + describe(replay) + ", not a replay of "
							+ describe(first));
		}
	}

	private List<HttpResponse<String>> awaitAll() throws Exception {
		CompletableFuture.allOf(this.responses.toArray(new CompletableFuture<?>[0]))
			.get(HANG_MINUTES, TimeUnit.MINUTES);
		return answered();
	}

	private List<HttpResponse<String>> answered() {
		return this.responses.stream().filter(CompletableFuture::isDone).map(CompletableFuture::join).toList();
	}

	private static String contentType(HttpResponse<String> response) {
		return response.headers().firstValue("Content-Type").orElse(null);
	}

	private static String describe(HttpResponse<String> response) {
		return response.statusCode() + " " + response.headers().map() + " " + response.body();
	}

	private static void check(boolean condition, String message) {
		if (!condition) {
			throw new AssertionError(message);
		}
	}

}
