package io.relaypinner.relay.api;

import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.relay.http.HttpResponses;
import io.relaypinner.relay.http.RouteHandler;
import io.relaypinner.relay.http.RouteRequest;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicReference;

/**
 * {@code GET /metrics}, spec 4.3: the node's registry in the Prometheus text format 0.0.4.
 *
 * <p>A scrape runs on {@code executor}, not on the event loop: the JVM collectors call
 * management beans (thread dumps for thread states, among others) that can take milliseconds, and
 * the loops also carry libp2p traffic. Scrapes that arrive while one is running share its result
 * instead of queueing more work, so a burst of scrapers costs one scrape.
 */
public final class MetricsRoute implements RouteHandler {
  private static final int INITIAL_BUFFER = 16 * 1024;

  private final PrometheusRegistry registry;
  private final Executor executor;
  private final PrometheusTextFormatWriter writer = PrometheusTextFormatWriter.create();
  private final AtomicReference<CompletableFuture<byte[]>> running = new AtomicReference<>();

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
    return scrape().thenApply(
        body -> HttpResponses.bytes(HttpResponseStatus.OK, contentType, body));
  }

  private CompletableFuture<byte[]> scrape() {
    while (true) {
      final CompletableFuture<byte[]> current = running.get();
      if (current != null) {
        return current;
      }
      final CompletableFuture<byte[]> mine = new CompletableFuture<>();
      if (running.compareAndSet(null, mine)) {
        try {
          executor.execute(() -> {
            try {
              final byte[] body = render();
              running.compareAndSet(mine, null);
              mine.complete(body);
            } catch (final RuntimeException e) {
              running.compareAndSet(mine, null);
              mine.completeExceptionally(e);
            }
          });
        } catch (final RuntimeException e) {
          running.compareAndSet(mine, null);
          mine.completeExceptionally(e);
        }
        return mine;
      }
    }
  }

  private byte[] render() {
    final ByteArrayOutputStream out = new ByteArrayOutputStream(INITIAL_BUFFER);
    try {
      writer.write(out, registry.scrape());
    } catch (final IOException e) {
      throw new UncheckedIOException("writing to memory failed", e);
    }
    return out.toByteArray();
  }
}
