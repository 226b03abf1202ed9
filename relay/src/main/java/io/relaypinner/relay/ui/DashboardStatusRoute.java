package io.relaypinner.relay.ui;

import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.relaypinner.ipfs.pin.PinStore;
import io.relaypinner.libp2p.host.Connection;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.orbitdb.OrbitDbReplica;
import io.relaypinner.relay.api.Timestamps;
import io.relaypinner.relay.http.HttpResponses;
import io.relaypinner.relay.http.RouteHandler;
import io.relaypinner.relay.http.RouteRequest;
import io.relaypinner.relay.replication.ReplicationService;
import io.relaypinner.relay.sync.SyncEngine;
import io.relaypinner.relay.sync.SyncHistory;
import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * {@code GET /dashboard/status} (see {@link DashboardStatus}). Reads the pin store and the file
 * system, so it runs on the storage executor, never on the event loop; an answer is reused for
 * {@link #REUSE} so that many open status pages cost no more than one, and requests arriving
 * while one is computed wait for that one (one computation at a time).
 */
public final class DashboardStatusRoute implements RouteHandler {
  /** Databases listed at most (the rest are only counted). */
  public static final int MAX_DATABASES = 200;
  /** How long one computed status answers every request. */
  public static final Duration REUSE = Duration.ofSeconds(1);
  /**
   * How long one count of the pins is shown: counting reads the whole pin keyspace (in pages,
   * nothing kept), which anonymous page views must not cause more than once a minute.
   */
  public static final Duration PIN_COUNT_REUSE = Duration.ofMinutes(1);

  private record PinCount(long atMillis, long count) {}

  private volatile PinCount pinCount;

  private record Cached(long atMillis, DashboardStatus status) {}

  private volatile Cached cached;
  private final AtomicReference<CompletableFuture<DashboardStatus>> computing =
      new AtomicReference<>();

  private final Supplier<Optional<Host>> host;
  private final Supplier<Optional<ReplicationService>> replication;
  private final SyncEngine sync;
  private final PinStore pins;
  private final Path dataDir;
  private final Optional<Long> quotaBytes;
  private final Executor storage;
  private final Clock clock;
  private final HttpResponses responses;

  public DashboardStatusRoute(final Supplier<Optional<Host>> host,
      final Supplier<Optional<ReplicationService>> replication, final SyncEngine sync,
      final PinStore pins, final Path dataDir, final Optional<Long> quotaBytes,
      final Executor storage, final Clock clock, final HttpResponses responses) {
    this.host = Objects.requireNonNull(host, "host");
    this.replication = Objects.requireNonNull(replication, "replication");
    this.sync = Objects.requireNonNull(sync, "sync");
    this.pins = Objects.requireNonNull(pins, "pins");
    this.dataDir = Objects.requireNonNull(dataDir, "dataDir");
    this.quotaBytes = Objects.requireNonNull(quotaBytes, "quotaBytes");
    this.storage = Objects.requireNonNull(storage, "storage");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.responses = Objects.requireNonNull(responses, "responses");
  }

  @Override
  public CompletableFuture<FullHttpResponse> handle(final RouteRequest request) {
    final Cached last = cached;
    if (last != null && clock.millis() - last.atMillis() < REUSE.toMillis()) {
      return CompletableFuture.completedFuture(
          responses.json(HttpResponseStatus.OK, last.status()));
    }
    return computed().thenApply(status -> responses.json(HttpResponseStatus.OK, status));
  }

  /**
   * The status being computed, or a new computation on the storage executor: one at a time,
   * however many requests arrive while it runs (each was a whole walk of the followed databases
   * and the sync history, queued on the storage executor once per request).
   */
  private CompletableFuture<DashboardStatus> computed() {
    while (true) {
      final CompletableFuture<DashboardStatus> running = computing.get();
      if (running != null) {
        return running;
      }
      final CompletableFuture<DashboardStatus> mine = new CompletableFuture<>();
      if (!computing.compareAndSet(null, mine)) {
        continue;
      }
      try {
        storage.execute(() -> {
          try {
            final DashboardStatus status = status();
            cached = new Cached(clock.millis(), status);
            computing.set(null);
            mine.complete(status);
          } catch (final RuntimeException e) {
            computing.set(null);
            mine.completeExceptionally(e);
          }
        });
      } catch (final RejectedExecutionException e) {
        computing.set(null);
        mine.completeExceptionally(e);
      }
      return mine;
    }
  }

  /** The status as of now. */
  public DashboardStatus status() {
    final Map<String, DashboardStatus.Database> databases = merged();
    return new DashboardStatus(connections(), databasesList(databases), databases.size(),
        storageStatus(),
        new DashboardStatus.Sync(sync.slots(), sync.recentProblems().stream()
            .map(p -> new DashboardStatus.Problem(Timestamps.format(p.at()), p.kind(),
                p.subject(), p.message())).toList()),
        Timestamps.now(clock));
  }

  private DashboardStatus.Connections connections() {
    final Map<String, Integer> byTransport = new LinkedHashMap<>();
    for (final String transport : List.of("tcp", "websocket", "webrtc", "circuit", "other")) {
      byTransport.put(transport, 0);
    }
    int total = 0;
    final Optional<Host> current = host.get();
    if (current.isPresent()) {
      for (final Connection connection : current.get().connections()) {
        byTransport.merge(transport(connection), 1, Integer::sum);
        total++;
      }
    }
    return new DashboardStatus.Connections(total, byTransport);
  }

  private long pinCount() {
    final PinCount last = pinCount;
    if (last != null && clock.millis() - last.atMillis() < PIN_COUNT_REUSE.toMillis()) {
      return last.count();
    }
    final long count = pins.count();
    pinCount = new PinCount(clock.millis(), count);
    return count;
  }

  /** The transport of a connection from its local and remote addresses. */
  static String transport(final Connection connection) {
    final String remote = String.valueOf(connection.remoteAddress());
    final String local = String.valueOf(connection.localAddress());
    if (remote.contains("/p2p-circuit") || local.contains("/p2p-circuit")) {
      return "circuit";
    }
    if (remote.contains("/webrtc") || local.contains("/webrtc")) {
      return "webrtc";
    }
    if (remote.contains("/ws") || local.contains("/ws") || remote.contains("/wss")) {
      return "websocket";
    }
    if (remote.contains("/tcp/")) {
      return "tcp";
    }
    return "other";
  }

  private Map<String, DashboardStatus.Database> merged() {
    final Map<String, DashboardStatus.Database> out = new LinkedHashMap<>();
    final Optional<ReplicationService> service = replication.get();
    if (service.isPresent()) {
      for (final OrbitDbReplica replica : service.get().replicas().replicas()) {
        final String address = replica.address().toString();
        final int missing = replica.log().pending().size();
        out.put(address, new DashboardStatus.Database(address, replica.log().size(),
            replica.log().heads().size(), missing, missing == 0, null));
      }
    }
    final SyncHistory history = sync.history();
    for (final SyncHistory.Entry entry : history.all()) {
      final String synced = Timestamps.format(entry.lastSyncedAt());
      out.compute(entry.address(), (address, db) -> db == null
          ? new DashboardStatus.Database(address, null, null, null, null, synced)
          : new DashboardStatus.Database(address, db.entries(), db.heads(), db.missing(),
              db.complete(), synced));
    }
    return out;
  }

  private static List<DashboardStatus.Database> databasesList(
      final Map<String, DashboardStatus.Database> databases) {
    final List<DashboardStatus.Database> all = new ArrayList<>(databases.values());
    all.sort(Comparator.comparing((DashboardStatus.Database d) ->
        d.entries() == null ? -1 : d.entries()).reversed()
        .thenComparing(DashboardStatus.Database::address));
    return all.size() > MAX_DATABASES ? List.copyOf(all.subList(0, MAX_DATABASES)) : all;
  }

  private DashboardStatus.Storage storageStatus() {
    long total = 0;
    long usable = 0;
    try {
      final FileStore store = Files.getFileStore(dataDir);
      total = store.getTotalSpace();
      usable = store.getUsableSpace();
    } catch (final IOException e) {
      // Reported as zero: the page shows the file system as unknown.
    }
    return new DashboardStatus.Storage(total, usable,
        (int) Math.min(Integer.MAX_VALUE, pinCount()), quotaBytes.orElse(null));
  }
}
