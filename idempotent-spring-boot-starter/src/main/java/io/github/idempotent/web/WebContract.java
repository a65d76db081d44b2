package io.github.idempotent.web;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.Supplier;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;

import org.springframework.core.annotation.MergedAnnotation;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.server.PathContainer;
import org.springframework.util.Assert;
import org.springframework.util.function.SingletonSupplier;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.core.IdempotencyExecutor;
import io.github.idempotent.core.IdempotentOperation;
import io.github.idempotent.core.IdempotencyExecutor.ResponseCapture.Replay;
import io.github.idempotent.core.RecordedResponse;

/**
 * The settings of the HTTP contract, its routes and replay customizers, built once for
 * Spring MVC and WebFlux alike and handed to the recording filter, the handler adapter
 * and the result converter.
 */
final class WebContract {

	final IdempotencyResponseHeaders headers;

	final ReplayedHeaders replayedHeaders;

	final long maxRequestSize;

	final long maxResultSize;

	// Resolved by the recording filters as they are created, so that a customizer that
	// cannot be created fails the start-up, not the first replay; not with the contract:
	// the ResponseEntity converter needs the contract, the codec the converter, and a
	// customizer may need the codec (through the template).
	private final Supplier<List<IdempotentReplayCustomizer>> customizers;

	private final List<Route> routes;

	// maxResultSize is the executor's: the filters record no more than it stores.
	WebContract(IdempotencyResponseHeaders headers, IdempotentWebProperties web, long maxResultSize,
			Supplier<List<IdempotentReplayCustomizer>> customizers) {
		Assert.isTrue(web.maxRequestSize().toBytes() > 0, "maxRequestSize must be positive");
		Assert.isTrue(maxResultSize > 0, "maxResultSize must be positive");
		this.headers = headers;
		// The replay marker and the key echo are set anew on each response.
		List<String> notStored = new ArrayList<>(web.excludedResponseHeaders());
		notStored.addAll(List.of(web.replayedHeader(), web.headerName()));
		this.replayedHeaders = new ReplayedHeaders(notStored, web.replayedResponseHeaders());
		this.maxRequestSize = web.maxRequestSize().toBytes();
		this.maxResultSize = maxResultSize;
		this.customizers = SingletonSupplier.of(() -> List.copyOf(customizers.get()));
		this.routes = web.routes().stream().map(Route::of).toList();
	}

	// The headers a replay carries: the stored ones, as the customizers left them.
	HttpHeaders replayed(String operation, String key, RecordedResponse response) {
		HttpHeaders headers = new HttpHeaders();
		response.headers().forEach(headers::put);
		List<IdempotentReplayCustomizer> customizers = customizers();
		if (customizers.isEmpty()) {
			return headers;
		}
		ReplayedResponse replay = new ReplayedResponse(operation, key, response.status(), headers, response.body(),
				this.replayedHeaders);
		customizers.forEach(replay::customize);
		return replay.headers();
	}

	/**
	 * Writes {@code replay}'s headers with {@code set} (its caller the status), over what
	 * the stand-in's handling applied (a {@code @ResponseStatus}, a content type): the
	 * stored content type, and each other header unless the replay request itself set it
	 * after the call began (a {@code postHandle}'s request id), whose own value wins;
	 * then the marks.
	 * @param before the response's headers when the call began
	 * @param now its headers as the replay is written
	 */
	void writeReplayed(Replay replay, @Nullable String sentKey, Map<String, List<String>> before,
			Map<String, List<String>> now, BiConsumer<String, List<String>> set) {
		replayed(replay.operation(), replay.key(), replay.response()).forEach((name, values) -> {
			if (name.equalsIgnoreCase(HttpHeaders.CONTENT_TYPE) || !now.containsKey(name)
					|| now.get(name).equals(before.get(name))) {
				set.accept(name, values);
			}
		});
		mark(true, true, null, sentKey, (name, value) -> set.accept(name, List.of(value)));
	}

	/**
	 * Sets the echo of {@code sentKey}, the key the request's header sent, on the
	 * response of a call that ran, and the replay marker on a replay (of a stored
	 * exception too); neither on a refusal nor on a failure, whose responses pass
	 * through.
	 */
	void mark(boolean replay, boolean ran, @Nullable Throwable failure, @Nullable String sentKey,
			BiConsumer<String, String> set) {
		if (!replay && (!ran || failure != null)) {
			return;
		}
		if (sentKey != null) {
			set.accept(this.headers.keyHeader(), sentKey);
		}
		if (replay) {
			set.accept(this.headers.replayedHeader(), "true");
		}
	}

	List<IdempotentReplayCustomizer> customizers() {
		return this.customizers.get();
	}

	// With routes, every handler method: which requests a route guards is known only
	// from the request.
	boolean mayGuard(IdempotencyExecutor executor, HandlerMethod handler) {
		return !this.routes.isEmpty() || executor.operation(handler.getMethod(), handler.getBeanType()) != null;
	}

	// The handler's own @Idempotent wins; else the first route that matches.
	@Nullable IdempotentOperation operation(IdempotencyExecutor executor, HandlerMethod handler, HttpMethod method,
			PathContainer path) {
		IdempotentOperation annotated = executor.operation(handler.getMethod(), handler.getBeanType());
		if (annotated != null) {
			return annotated;
		}
		for (Route route : this.routes) {
			if (route.matches(method, path)) {
				try {
					return executor.routedOperation(handler.getMethod(), handler.getBeanType(), route.settings());
				}
				catch (IllegalStateException ex) {
					throw new IllegalStateException("idempotent.web.routes " + route.route().paths() + " match "
							+ handler.getShortLogMessage() + ", which cannot be guarded (" + ex.getMessage()
							+ "). Add its path to the route's exclude-paths", ex);
				}
			}
		}
		return null;
	}

	/**
	 * A route of {@code idempotent.web.routes}: a request it matches is guarded as if its
	 * handler carried {@code @Idempotent} with the route's settings (docs/http.md,
	 * "Guarding routes by configuration"). A {@code null} duration takes the
	 * {@code idempotent.*} default.
	 */
	private record Route(IdempotentWebProperties.Route route, Set<HttpMethod> methods, List<PathPattern> paths,
			List<PathPattern> excludePaths, Idempotent settings) {

		static Route of(IdempotentWebProperties.Route route) {
			Assert.notEmpty(route.paths(), "A route needs at least one path pattern");
			Assert.notEmpty(route.methods(), "A route needs at least one HTTP method");
			Map<String, Object> settings = new HashMap<>();
			settings.put("required", route.required());
			put(settings, "ttl", route.ttl());
			put(settings, "lease", route.lease());
			put(settings, "maxDuration", route.maxDuration());
			put(settings, "waitFor", route.waitFor());
			put(settings, "retryAfter", route.retryAfter());
			return new Route(route,
					route.methods()
						.stream()
						.map((method) -> HttpMethod.valueOf(method.trim().toUpperCase(Locale.ROOT)))
						.collect(Collectors.toSet()),
					parse(route.paths()), parse(route.excludePaths()),
					MergedAnnotation.of(Idempotent.class, settings).synthesize());
		}

		private static void put(Map<String, Object> settings, String name, @Nullable Duration value) {
			if (value != null) {
				settings.put(name, value.toString());
			}
		}

		private static List<PathPattern> parse(List<String> patterns) {
			return patterns.stream().map(PathPatternParser.defaultInstance::parse).toList();
		}

		boolean matches(HttpMethod method, PathContainer path) {
			return this.methods.contains(method) && this.paths.stream().anyMatch((p) -> p.matches(path))
					&& this.excludePaths.stream().noneMatch((p) -> p.matches(path));
		}

	}

}
