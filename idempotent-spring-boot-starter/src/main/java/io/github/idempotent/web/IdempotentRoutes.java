package io.github.idempotent.web;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.jspecify.annotations.Nullable;

import org.springframework.core.annotation.MergedAnnotation;
import org.springframework.http.HttpMethod;
import org.springframework.http.server.PathContainer;
import org.springframework.util.Assert;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.aop.IdempotentOperation;
import io.github.idempotent.aop.IdempotentOperationSource;

/**
 * The handler methods guarded by configuration ({@code idempotent.web.routes}), without
 * {@code @Idempotent}: a request whose method and path a route matches is guarded as if
 * its handler method carried the annotation with the route's settings, the key from the
 * request header. The handler's own {@code @Idempotent} wins over any route. Paths are
 * matched with Spring's {@link PathPattern}s, as request mappings are, against the path
 * within the application; the first route that matches a request applies.
 */
public final class IdempotentRoutes {

	private final List<Parsed> routes;

	public IdempotentRoutes(List<Route> routes) {
		this.routes = routes.stream().map(Parsed::of).toList();
	}

	boolean isEmpty() {
		return this.routes.isEmpty();
	}

	/**
	 * The operation that guards a request to {@code handler}: the handler's
	 * {@code @Idempotent}, else that of the first route that matches the request, else
	 * {@code null}.
	 */
	@Nullable IdempotentOperation operation(IdempotentOperationSource operations, HandlerMethod handler, HttpMethod method,
			PathContainer path) {
		IdempotentOperation annotated = operations.get(handler.getMethod(), handler.getBeanType());
		if (annotated != null) {
			return annotated;
		}
		for (Parsed route : this.routes) {
			if (route.matches(method, path)) {
				try {
					return operations.routed(handler.getMethod(), handler.getBeanType(), route.settings());
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
	 * A configured route.
	 *
	 * @param paths path patterns of the requests guarded ({@code /api/**})
	 * @param excludePaths path patterns of requests the route leaves unguarded
	 * @param methods HTTP methods of the requests guarded
	 * @param required whether a request without a key is refused with 400, rather than
	 * run unguarded
	 * @param ttl how long a completed response is replayed, or {@code null} for
	 * {@code idempotent.ttl}
	 * @param lease {@code null} for {@code idempotent.lease}
	 * @param maxDuration {@code null} for {@code idempotent.max-duration}
	 * @param waitFor {@code null} for {@code idempotent.wait-for}
	 * @param retryAfter {@code null} for {@code idempotent.retry-after}
	 */
	public record Route(List<String> paths, List<String> excludePaths, Set<HttpMethod> methods, boolean required,
			@Nullable Duration ttl, @Nullable Duration lease, @Nullable Duration maxDuration,
			@Nullable Duration waitFor, @Nullable Duration retryAfter) {

		public Route {
			Assert.notEmpty(paths, "A route needs at least one path pattern");
			Assert.notEmpty(methods, "A route needs at least one HTTP method");
			paths = List.copyOf(paths);
			excludePaths = List.copyOf(excludePaths);
			methods = Set.copyOf(methods);
		}

	}

	/**
	 * A route with its patterns parsed and its settings in the annotation's form, once.
	 */
	private record Parsed(Route route, List<PathPattern> paths, List<PathPattern> excludePaths, Idempotent settings) {

		static Parsed of(Route route) {
			Map<String, Object> settings = new HashMap<>();
			settings.put("required", route.required());
			put(settings, "ttl", route.ttl());
			put(settings, "lease", route.lease());
			put(settings, "maxDuration", route.maxDuration());
			put(settings, "waitFor", route.waitFor());
			put(settings, "retryAfter", route.retryAfter());
			return new Parsed(route, parse(route.paths()), parse(route.excludePaths()),
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
			return this.route.methods().contains(method) && matchesAny(this.paths, path)
					&& !matchesAny(this.excludePaths, path);
		}

		private static boolean matchesAny(List<PathPattern> patterns, PathContainer path) {
			for (PathPattern pattern : patterns) {
				if (pattern.matches(path)) {
					return true;
				}
			}
			return false;
		}

	}

}
