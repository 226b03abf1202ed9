package io.relaypinner.relay.http;

import io.netty.handler.codec.http.HttpMethod;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * Maps (method, path) to a {@link RouteHandler}, spec 4. Exact paths win over prefixes; among
 * prefixes the longest wins. {@code HEAD} is served by the {@code GET} handler unless a
 * {@code HEAD} handler is registered; {@code OPTIONS} is answered for every path by the dispatcher
 * and cannot be routed. Immutable once built; adding a route is one line on the {@link Builder}.
 */
public final class Router {
  /** What a request resolves to. */
  public sealed interface Match permits Found, MethodNotAllowed, NotFound {}

  /**
   * @param route the registered pattern, used as the metrics label ({@code /ipfs/*} for prefixes)
   */
  public record Found(String route, RouteHandler handler) implements Match {}

  /** The path is known but not for this method; {@code allow} is the {@code Allow} header. */
  public record MethodNotAllowed(String route, String allow) implements Match {}

  /** No route has this path. */
  public enum NotFound implements Match {
    INSTANCE
  }

  private static final List<HttpMethod> ALLOW_ORDER = List.of(HttpMethod.GET, HttpMethod.HEAD,
      HttpMethod.POST, HttpMethod.PUT, HttpMethod.PATCH, HttpMethod.DELETE);

  /**
   * A route whose request body is streamed to it ({@link RouteRequest#body()}) instead of
   * aggregated under the server's body limit.
   *
   * @param maxBytes the largest body; more is answered 413 with {@code tooLargeCode}
   * @param deadline how long after its head the whole body must have arrived (the reader then
   *     gets {@link RequestBody.DeadlineException}); {@link Duration#ZERO}: no total deadline,
   *     only the per-read stall
   */
  public record StreamedRoute(long maxBytes, String tooLargeCode, Duration deadline) {
    public StreamedRoute {
      Objects.requireNonNull(tooLargeCode, "tooLargeCode");
      Objects.requireNonNull(deadline, "deadline");
      if (maxBytes <= 0) {
        throw new IllegalArgumentException("maxBytes must be positive");
      }
      if (deadline.isNegative()) {
        throw new IllegalArgumentException("deadline must not be negative: " + deadline);
      }
    }
  }

  private record Entry(String label, Map<HttpMethod, RouteHandler> handlers, String allow) {}

  private final Map<String, Entry> exact;
  private final List<Map.Entry<String, Entry>> prefixes;
  private final Map<String, StreamedRoute> streamed;
  /** "METHOD path" (exact) or "METHOD path*" (prefix): who may send a body. */
  private final Map<String, Predicate<String>> bodyAuthorizations;

  private Router(final Builder builder) {
    final Map<String, Entry> exactEntries = new HashMap<>();
    builder.exact.forEach((path, handlers) -> exactEntries.put(path, entry(path, handlers)));
    this.exact = Map.copyOf(exactEntries);
    final List<Map.Entry<String, Entry>> prefixEntries = new ArrayList<>();
    builder.prefixes.forEach((prefix, handlers) ->
        prefixEntries.add(Map.entry(prefix, entry(prefix + "*", handlers))));
    prefixEntries.sort(Comparator.comparingInt(
        (Map.Entry<String, Entry> e) -> e.getKey().length()).reversed());
    this.prefixes = List.copyOf(prefixEntries);
    this.streamed = Map.copyOf(builder.streamed);
    this.bodyAuthorizations = Map.copyOf(builder.bodyAuthorizations);
  }

  private static Entry entry(final String label, final Map<HttpMethod, RouteHandler> handlers) {
    final List<String> allow = new ArrayList<>();
    for (final HttpMethod method : ALLOW_ORDER) {
      if (handlers.containsKey(method)
          || method.equals(HttpMethod.HEAD) && handlers.containsKey(HttpMethod.GET)) {
        allow.add(method.name());
      }
    }
    handlers.keySet().stream().filter(m -> !ALLOW_ORDER.contains(m)).map(HttpMethod::name)
        .sorted().forEach(allow::add);
    allow.add(HttpMethod.OPTIONS.name());
    return new Entry(label, Map.copyOf(handlers), String.join(", ", allow));
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Resolves a request; {@code path} excludes the query string. */
  public Match match(final HttpMethod method, final String path) {
    final Entry entry = find(path);
    if (entry == null) {
      return NotFound.INSTANCE;
    }
    RouteHandler handler = entry.handlers().get(method);
    if (handler == null && HttpMethod.HEAD.equals(method)) {
      handler = entry.handlers().get(HttpMethod.GET);
    }
    return handler == null
        ? new MethodNotAllowed(entry.label(), entry.allow())
        : new Found(entry.label(), handler);
  }

  /** The streaming of an exact (method, path) route registered with {@link Builder#streamed}. */
  public Optional<StreamedRoute> streamedRoute(final HttpMethod method, final String path) {
    return streamed.isEmpty() ? Optional.empty()
        : Optional.ofNullable(streamed.get(method.name() + " " + path));
  }

  /**
   * Whether a request for (method, path) with {@code authorization} (the header, or null) may
   * have its body read: false only for a route registered with
   * {@link Builder#authorizedBody} whose check refuses it. The route then answers its own 401
   * without the body ({@code BodyAuthorizationHandler}).
   */
  public boolean bodyAuthorized(final HttpMethod method, final String path,
      final String authorization) {
    if (bodyAuthorizations.isEmpty()) {
      return true;
    }
    Predicate<String> check = bodyAuthorizations.get(method.name() + " " + path);
    if (check == null) {
      String longest = null;
      for (final String key : bodyAuthorizations.keySet()) {
        if (key.endsWith("*") && (method.name() + " " + path).startsWith(
            key.substring(0, key.length() - 1))
            && (longest == null || key.length() > longest.length())) {
          longest = key;
        }
      }
      check = longest == null ? null : bodyAuthorizations.get(longest);
    }
    return check == null || check.test(authorization);
  }

  /** The route label of a path whatever the method, or {@code null} when no route has it. */
  public String routeOf(final String path) {
    final Entry entry = find(path);
    return entry == null ? null : entry.label();
  }

  private Entry find(final String path) {
    final Entry entry = exact.get(path);
    if (entry != null) {
      return entry;
    }
    for (final Map.Entry<String, Entry> prefix : prefixes) {
      if (path.startsWith(prefix.getKey())) {
        return prefix.getValue();
      }
    }
    return null;
  }

  /** The registered patterns, for logs. */
  public List<String> routes() {
    final List<String> all = new ArrayList<>(exact.keySet());
    prefixes.forEach(p -> all.add(p.getValue().label()));
    Collections.sort(all);
    return all;
  }

  /** Collects routes; a duplicate (method, path) is a programming error. */
  public static final class Builder {
    private final Map<String, Map<HttpMethod, RouteHandler>> exact = new LinkedHashMap<>();
    private final Map<String, Map<HttpMethod, RouteHandler>> prefixes = new LinkedHashMap<>();
    private final Map<String, StreamedRoute> streamed = new HashMap<>();
    private final Map<String, Predicate<String>> bodyAuthorizations = new HashMap<>();

    private Builder() {}

    /**
     * The token check of a route with a body, made on the request's head before any of the body
     * is read and aggregated: {@code authorized} gets the {@code Authorization} header (or null).
     * A request it refuses reaches the route without its body (which is read and dropped), so
     * the route answers its own 401; the route must check the token before the body. For
     * {@code path} exactly, or every path under it when it ends in {@code *}.
     */
    public Builder authorizedBody(final HttpMethod method, final String path,
        final Predicate<String> authorized) {
      Objects.requireNonNull(method, "method");
      Objects.requireNonNull(path, "path");
      bodyAuthorizations.put(method.name() + " " + path,
          Objects.requireNonNull(authorized, "authorized"));
      return this;
    }

    public Builder get(final String path, final RouteHandler handler) {
      return route(HttpMethod.GET, path, handler);
    }

    public Builder post(final String path, final RouteHandler handler) {
      return route(HttpMethod.POST, path, handler);
    }

    /** A route for one exact path such as {@code /health}. */
    public Builder route(final HttpMethod method, final String path, final RouteHandler handler) {
      add(exact, method, path, handler);
      return this;
    }

    /**
     * A route for one exact path whose request body is streamed to the handler
     * ({@link RouteRequest#body()}), up to {@code maxBytes}; more is answered 413 with
     * {@code tooLargeCode}.
     */
    public Builder streamed(final HttpMethod method, final String path,
        final RouteHandler handler, final long maxBytes, final String tooLargeCode) {
      return streamed(method, path, handler, maxBytes, tooLargeCode, Duration.ZERO);
    }

    /**
     * As {@link #streamed(HttpMethod, String, RouteHandler, long, String)}, and the whole body
     * must have arrived within {@code deadline} of its head ({@link StreamedRoute#deadline}).
     */
    public Builder streamed(final HttpMethod method, final String path,
        final RouteHandler handler, final long maxBytes, final String tooLargeCode,
        final Duration deadline) {
      final StreamedRoute route = new StreamedRoute(maxBytes, tooLargeCode, deadline);
      route(method, path, handler);
      streamed.put(method.name() + " " + path, route);
      return this;
    }

    /** {@code GET} (and {@code HEAD}) for every path starting with {@code prefix}. */
    public Builder getPrefix(final String prefix, final RouteHandler handler) {
      return prefix(HttpMethod.GET, prefix, handler);
    }

    /** A route for every path starting with {@code prefix}, such as {@code /ipfs/}. */
    public Builder prefix(final HttpMethod method, final String prefix,
        final RouteHandler handler) {
      add(prefixes, method, prefix, handler);
      return this;
    }

    private static void add(final Map<String, Map<HttpMethod, RouteHandler>> table,
        final HttpMethod method, final String path, final RouteHandler handler) {
      Objects.requireNonNull(method, "method");
      Objects.requireNonNull(handler, "handler");
      if (path == null || !path.startsWith("/")) {
        throw new IllegalArgumentException("route path must start with '/': " + path);
      }
      if (HttpMethod.OPTIONS.equals(method)) {
        throw new IllegalArgumentException("OPTIONS is answered for every path; not routable");
      }
      final Map<HttpMethod, RouteHandler> handlers =
          table.computeIfAbsent(path, p -> new LinkedHashMap<>());
      if (handlers.putIfAbsent(method, handler) != null) {
        throw new IllegalArgumentException("duplicate route " + method + " " + path);
      }
    }

    public Router build() {
      return new Router(this);
    }
  }
}
