package io.relaypinner.relay.api;

import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.MetricNameFilter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.relay.http.HttpResponses;
import io.relaypinner.relay.http.RouteHandler;
import io.relaypinner.relay.http.RouteRequest;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.Executor;
import java.util.function.Predicate;

/**
 * {@code GET /metrics}, spec 4.3: the node's registry in the Prometheus text format 0.0.4.
 *
 * <p>A scrape runs on {@code executor}, not on the event loop: the JVM collectors call
 * management beans (thread dumps for thread states, among others) that can take milliseconds, and
 * the loops also carry libp2p traffic. Scrapes that arrive while one is running share its result
 * instead of queueing more work, so a burst of scrapers costs one scrape.
 *
 * <p>{@code ?name[]=<metric>} (repeatable, as Prometheus' own exporters accept) renders only those
 * metric families (exposition names, e.g. {@code relay_orbitdb_replication_events_total}) and
 * skips every other collector, the JVM ones included: a poll of one counter then costs a fraction
 * of a full scrape. At most {@value #MAX_NAMES} names (more: the full scrape) and {@value
 * #MAX_FILTERS} different filters running at once (more: the full scrape, shared).
 */
public final class MetricsRoute implements RouteHandler {
  private static final int INITIAL_BUFFER = 16 * 1024;
  /** Names one filtered scrape may ask for. */
  public static final int MAX_NAMES = 32;
  /** Different filtered scrapes running at once. */
  static final int MAX_FILTERS = 8;
  private static final Set<String> ALL = Set.of();

  private final PrometheusRegistry registry;
  private final Executor executor;
  private final PrometheusTextFormatWriter writer = PrometheusTextFormatWriter.create();
  /** Scrapes running, by their name filter (empty: all metrics). */
  private final ConcurrentMap<Set<String>, CompletableFuture<byte[]>> running =
      new ConcurrentHashMap<>();

  public MetricsRoute(final PrometheusRegistry registry, final Executor executor) {
    this.registry = Objects.requireNonNull(registry, "registry");
    this.executor = Objects.requireNonNull(executor, "executor");
  }

  /** {@code text/plain; version=0.0.4; charset=utf-8}. */
  public String contentType() {
    return writer.getContentType();
  }

  @Override
  public CompletableFuture<FullHttpResponse> handle(final RouteRequest request) {
    final String contentType = writer.getContentType();
    return scrape(names(request)).thenApply(
        body -> HttpResponses.bytes(HttpResponseStatus.OK, contentType, body));
  }

  /** The {@code name[]} filter of {@code request}; empty: all metrics. */
  private Set<String> names(final RouteRequest request) {
    final List<String> values = request.queryParameters().get("name[]");
    if (values == null || values.isEmpty() || values.size() > MAX_NAMES
        || running.size() >= MAX_FILTERS) {
      return ALL;
    }
    return Set.copyOf(new TreeSet<>(values));
  }

  private CompletableFuture<byte[]> scrape(final Set<String> names) {
    while (true) {
      final CompletableFuture<byte[]> current = running.get(names);
      if (current != null) {
        return current;
      }
      final CompletableFuture<byte[]> mine = new CompletableFuture<>();
      if (running.putIfAbsent(names, mine) == null) {
        try {
          executor.execute(() -> {
            try {
              final byte[] body = render(names);
              running.remove(names, mine);
              mine.complete(body);
            } catch (final RuntimeException e) {
              running.remove(names, mine);
              mine.completeExceptionally(e);
            }
          });
        } catch (final RuntimeException e) {
          running.remove(names, mine);
          mine.completeExceptionally(e);
        }
        return mine;
      }
    }
  }

  private byte[] render(final Set<String> names) {
    final ByteArrayOutputStream out = new ByteArrayOutputStream(INITIAL_BUFFER);
    final Predicate<String> filter = names.isEmpty() ? MetricNameFilter.ALLOW_ALL
        : MetricNameFilter.builder().nameMustBeEqualTo(names).build();
    try {
      writer.write(out, registry.scrape(filter));
    } catch (final IOException e) {
      throw new UncheckedIOException("writing to memory failed", e);
    }
    return out.toByteArray();
  }
}
