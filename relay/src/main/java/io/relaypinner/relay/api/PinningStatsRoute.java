package io.relaypinner.relay.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.relaypinner.relay.http.HttpResponses;
import io.relaypinner.relay.http.RouteHandler;
import io.relaypinner.relay.http.RouteRequest;
import io.relaypinner.relay.sync.SyncEngine;
import io.relaypinner.relay.sync.SyncQueueStats;
import io.relaypinner.relay.sync.SyncStats;
import java.time.Clock;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * {@code GET /pinning/stats}, spec 2.4: the sync engine's counters and queue, answered from memory
 * on the event loop. {@code syncQueue} is present whenever the engine runs, which is from start-up
 * (CONTRACT.md).
 */
public final class PinningStatsRoute implements RouteHandler {
  /** The statistics record of spec 2.4. */
  @JsonPropertyOrder({"totalPinned", "syncOperations", "failedSyncs", "pinnedMediaCids",
      "syncQueue", "timestamp"})
  public record PinningStats(long totalPinned, long syncOperations, long failedSyncs,
      List<String> pinnedMediaCids,
      @JsonInclude(JsonInclude.Include.NON_NULL) SyncQueueStats syncQueue, String timestamp) {}

  private final SyncEngine engine;
  private final Clock clock;
  private final HttpResponses responses;

  public PinningStatsRoute(final SyncEngine engine, final Clock clock,
      final HttpResponses responses) {
    this.engine = Objects.requireNonNull(engine, "engine");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.responses = Objects.requireNonNull(responses, "responses");
  }

  @Override
  public CompletableFuture<FullHttpResponse> handle(final RouteRequest request) {
    return CompletableFuture.completedFuture(responses.json(HttpResponseStatus.OK, record()));
  }

  /** The record as of now. */
  public PinningStats record() {
    final SyncStats stats = engine.stats();
    return new PinningStats(stats.totalPinned(), stats.syncOperations(), stats.failedSyncs(),
        stats.pinnedMediaCids(), stats.syncQueue(), Timestamps.now(clock));
  }
}
