package io.relaypinner.relay.ui;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.handler.codec.http.FullHttpResponse;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.ipfs.datastore.MemoryDatastore;
import io.relaypinner.ipfs.pin.CodecLinkResolver;
import io.relaypinner.ipfs.pin.PinStore;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.http.HttpResponses;
import io.relaypinner.relay.sync.SyncEngine;
import io.relaypinner.relay.sync.SyncHistory;
import io.relaypinner.relay.sync.SyncResult;
import io.relaypinner.testkit.MutableClock;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code GET /dashboard/status} is anonymous and each computation walks the followed databases
 * and the sync history: however many requests arrive, one computation runs at a time and its
 * answer serves every request for {@link DashboardStatusRoute#REUSE}.
 */
class DashboardStatusRouteTest {
  private final MutableClock clock = new MutableClock(Instant.parse("2026-11-29T10:00:00Z"));
  private final SyncEngine engine = new SyncEngine(RelayConfig.DEFAULT.sync(),
      context -> SyncResult.empty(context.address()), new SyncHistory(new MemoryDatastore(), 10),
      new PrometheusRegistry(), clock);
  /** The storage executor, run by hand. */
  private final List<Runnable> storage = new ArrayList<>();
  private final List<FullHttpResponse> answers = new ArrayList<>();

  @TempDir
  Path dir;

  @AfterEach
  void tearDown() {
    engine.close();
    answers.forEach(FullHttpResponse::release);
  }

  private DashboardStatusRoute route() {
    return new DashboardStatusRoute(Optional::empty, Optional::empty, engine,
        new PinStore(new MemoryDatastore(), new MemoryBlockstore(), CodecLinkResolver.standard()),
        dir, Optional.empty(), storage::add, clock,
        new HttpResponses(HttpResponses.newObjectMapper()));
  }

  private void runStorage() {
    final List<Runnable> due = new ArrayList<>(storage);
    storage.clear();
    due.forEach(Runnable::run);
  }

  @Test
  void requestsWhileOneIsComputed_shouldWaitForThatOne_andTheAnswerBeReusedForASecond() {
    final DashboardStatusRoute route = route();
    final List<CompletableFuture<FullHttpResponse>> pending = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      pending.add(route.handle(null));
    }
    assertThat(storage).hasSize(1);
    assertThat(pending).noneMatch(CompletableFuture::isDone);

    runStorage();
    for (final CompletableFuture<FullHttpResponse> answer : pending) {
      assertThat(answer).isCompletedWithValueMatching(r -> r.status().code() == 200);
      answers.add(answer.join());
    }

    // Within the reuse time: answered at once, nothing computed.
    clock.advance(DashboardStatusRoute.REUSE.minusMillis(1));
    final CompletableFuture<FullHttpResponse> reused = route.handle(null);
    assertThat(reused).isDone();
    answers.add(reused.join());
    assertThat(storage).isEmpty();

    // After it: one new computation.
    clock.advance(Duration.ofMillis(1));
    final CompletableFuture<FullHttpResponse> fresh = route.handle(null);
    final CompletableFuture<FullHttpResponse> alongside = route.handle(null);
    assertThat(storage).hasSize(1);
    runStorage();
    answers.add(fresh.join());
    answers.add(alongside.join());
  }
}
