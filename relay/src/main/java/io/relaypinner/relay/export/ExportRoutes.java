package io.relaypinner.relay.export;

import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.common.budget.IpPrefix;
import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.relay.gateway.CarPlanner;
import io.relaypinner.relay.gateway.CarSections;
import io.relaypinner.relay.gateway.GatewayMetrics;
import io.relaypinner.relay.gateway.SliceInput;
import io.relaypinner.relay.http.BearerAuth;
import io.relaypinner.relay.http.ErrorCodes;
import io.relaypinner.relay.http.ErrorMapping;
import io.relaypinner.relay.http.HttpResponses;
import io.relaypinner.relay.http.RequestBody;
import io.relaypinner.relay.http.RouteHandler;
import io.relaypinner.relay.http.RouteRequest;
import io.relaypinner.relay.http.StreamedResponse;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code GET /pinning/export?address=<db>[&media=true]} (public, like {@code /ipfs/}: a CAR v1
 * of one followed database, streamed) and {@code POST /pinning/import} (a CAR body; needs
 * {@code RELAY_API_TOKEN} when it is set; staged on disk, refused for a database the operator's
 * policy does not follow, every entry verified before it is stored; the database is then synced
 * like one a peer announced). Imports take a slot ({@code RELAY_IMPORT_SLOTS}, one per client
 * address) for as long as they run; the body must arrive within {@code RELAY_IMPORT_TIMEOUT_MS}
 * (the route's deadline, {@link io.relaypinner.relay.http.Router.Builder#streamed}). JSON errors
 * in the relay's shape.
 */
public final class ExportRoutes {
  private static final Logger LOG = LoggerFactory.getLogger(ExportRoutes.class);
  public static final String EXPORT = "/pinning/export";
  public static final String IMPORT = "/pinning/import";
  /**
   * The largest CAR {@code POST /pinning/import} takes (staged on disk while it arrives, so each
   * import slot may use this much of the data directory): 128 MiB.
   */
  public static final long MAX_IMPORT_BYTES = 128L << 20;
  /** Imports one client address may run at once. */
  public static final int SLOTS_PER_CLIENT = 1;
  /** 413 code of an import over {@link #MAX_IMPORT_BYTES}. */
  public static final String CAR_TOO_LARGE = "car_too_large";
  /** 503 code while every import slot, or the client's one, is taken. */
  public static final String IMPORT_BUSY = "import_busy";
  /** 408 code of an import whose body did not arrive within {@code RELAY_IMPORT_TIMEOUT_MS}. */
  public static final String IMPORT_TIMEOUT = "import_timeout";

  private final DatabaseExporter exporter;
  private final DatabaseImporter importer;
  private final Blockstore blockstore;
  private final Executor storage;
  private final HttpResponses responses;
  private final GatewayMetrics gatewayMetrics;
  private final ImportMetrics metrics;
  private final BearerAuth auth;
  private final Consumer<OrbitDbAddress> imported;
  private final Slots slots;
  private final IpPrefix prefix;
  /**
   * The threads imports run on, one per slot: an upload may take {@code RELAY_IMPORT_TIMEOUT_MS},
   * and on the storage executor slow uploads held threads the {@code /ipfs/} routes need. Idle
   * threads end after 30 s (daemons; nothing to shut down).
   */
  private final ExecutorService importThreads;

  /**
   * @param staging where the importer stages bodies (its bytes are a metric)
   * @param registry the node's metrics ({@link ImportMetrics})
   * @param slots imports at once ({@code RELAY_IMPORT_SLOTS}; one per client address)
   * @param prefix how a client address is keyed ({@code RELAY_IPV4_PREFIX_LENGTH},
   *     {@code RELAY_IPV6_PREFIX_LENGTH})
   * @param imported told the address of each imported database (the relay queues a sync)
   */
  public ExportRoutes(final DatabaseExporter exporter, final DatabaseImporter importer,
      final ImportStaging staging, final Blockstore blockstore, final Executor storage,
      final HttpResponses responses, final GatewayMetrics gatewayMetrics,
      final PrometheusRegistry registry, final Optional<String> apiToken, final int slots,
      final IpPrefix prefix, final Consumer<OrbitDbAddress> imported) {
    this.exporter = Objects.requireNonNull(exporter, "exporter");
    this.importer = Objects.requireNonNull(importer, "importer");
    this.blockstore = Objects.requireNonNull(blockstore, "blockstore");
    this.storage = Objects.requireNonNull(storage, "storage");
    this.responses = Objects.requireNonNull(responses, "responses");
    this.gatewayMetrics = Objects.requireNonNull(gatewayMetrics, "gatewayMetrics");
    this.auth = BearerAuth.apiToken(apiToken);
    this.imported = Objects.requireNonNull(imported, "imported");
    if (slots < 1) {
      throw new IllegalArgumentException("slots must be positive: " + slots);
    }
    this.slots = new Slots(slots);
    this.prefix = Objects.requireNonNull(prefix, "prefix");
    this.importThreads = new ThreadPoolExecutor(0, slots, 30, TimeUnit.SECONDS,
        new SynchronousQueue<>(), new DefaultThreadFactory("relay-import", true));
    this.metrics = new ImportMetrics(registry, this.slots::used, staging::stagedBytes);
  }

  /** The export route. */
  public RouteHandler export() {
    return this::exportCar;
  }

  /** The import route. */
  public RouteHandler importer() {
    return this::importCar;
  }

  private CompletableFuture<FullHttpResponse> exportCar(final RouteRequest request) {
    final Optional<String> text = request.queryParameter("address");
    if (text.isEmpty() || text.get().isBlank()) {
      return done(responses.error(HttpResponseStatus.BAD_REQUEST, ErrorCodes.MISSING_DB_ADDRESS,
          "use /pinning/export?address=/orbitdb/<cid>[&media=true]"));
    }
    final Optional<OrbitDbAddress> parsed = OrbitDbAddress.tryParse(text.get().trim());
    if (parsed.isEmpty()) {
      return done(responses.invalidAddress(text.get().trim()));
    }
    final OrbitDbAddress address = parsed.get();
    final boolean media = "true".equalsIgnoreCase(request.queryParameter("media").orElse(""));
    try {
      return CompletableFuture.supplyAsync(() -> {
        final CarPlanner.Plan plan;
        try {
          plan = exporter.plan(address, media);
        } catch (final DatabaseExporter.UnknownDatabaseException e) {
          return responses.error(HttpResponseStatus.NOT_FOUND, ErrorCodes.DATABASE_NOT_FOUND,
              e.getMessage());
        } catch (final CarPlanner.TooLargeException e) {
          return responses.error(HttpResponseStatus.BAD_REQUEST, "car_too_large",
              e.getMessage());
        }
        final StreamedResponse response = new StreamedResponse(HttpResponseStatus.OK,
            plan.length(), (resume, fileRegions) -> new SliceInput(
                () -> new CarSections(blockstore, CarSections.NO_FILES, plan),
                plan.length(), storage, resume, gatewayMetrics));
        response.headers()
            .set(HttpHeaderNames.CONTENT_TYPE, "application/vnd.ipld.car; version=1")
            .set(HttpHeaderNames.CONTENT_DISPOSITION,
                "attachment; filename=\"" + address.manifest() + ".car\"")
            .set(HttpHeaderNames.CACHE_CONTROL, "no-store")
            .set("X-Content-Type-Options", "nosniff");
        return response;
      }, storage);
    } catch (final RejectedExecutionException e) {
      return done(responses.error(ErrorMapping.busy()));
    }
  }

  private CompletableFuture<FullHttpResponse> importCar(final RouteRequest request) {
    if (!auth.permits(request.headers().get(HttpHeaderNames.AUTHORIZATION))) {
      return done(BearerAuth.apiTokenRequired(responses));
    }
    final String client = clientKey(request.remoteAddress());
    final Slots.Refusal refusal = slots.tryAcquire(client);
    if (refusal != null) {
      metrics.outcome(refusal == Slots.Refusal.CLIENT ? ImportMetrics.CLIENT_BUSY
          : ImportMetrics.BUSY);
      return done(responses.error(HttpResponseStatus.SERVICE_UNAVAILABLE, IMPORT_BUSY,
          refusal == Slots.Refusal.CLIENT
              ? "an import from this address is running, retry when it has ended"
              : "every import slot is taken, retry later"));
    }
    // Streamed on this route (the body is read as it arrives, on an import thread); a body
    // the server aggregated (none was sent) is read from memory.
    final InputStream body = request.body().<InputStream>map(b -> b)
        .orElseGet(() -> {
          final byte[] bytes = new byte[request.content().readableBytes()];
          request.content().getBytes(request.content().readerIndex(), bytes);
          return new ByteArrayInputStream(bytes);
        });
    try {
      return CompletableFuture.supplyAsync(() -> {
        try {
          final DatabaseImporter.Result result = importer.importCar(body);
          LOG.info("imported {}: {} entries, {} rejected, {} media", result.address(),
              result.entries(), result.rejected(), result.media());
          metrics.outcome(ImportMetrics.IMPORTED);
          metrics.held(result.heldBytes());
          imported.accept(result.address());
          return responses.json(HttpResponseStatus.OK, Map.of("ok", true,
              "address", result.address().toString(), "entries", result.entries(),
              "rejected", result.rejected(),
              "heads", result.heads().stream().map(Cid::toString).toList(),
              "media", result.media()));
        } catch (final DatabaseImporter.BadImportException e) {
          LOG.debug("import refused: {}", e.getMessage());
          metrics.outcome(ImportMetrics.INVALID);
          return responses.error(HttpResponseStatus.BAD_REQUEST, "invalid_car", e.getMessage());
        } catch (final DatabaseImporter.DeniedException e) {
          LOG.debug("import refused: {}", e.getMessage());
          metrics.outcome(ImportMetrics.DENIED);
          return responses.error(HttpResponseStatus.FORBIDDEN, ErrorCodes.DATABASE_DENIED,
              e.getMessage());
        } catch (final RequestBody.TooLargeException | ImportStaging.TooLargeException e) {
          LOG.debug("import refused: {}", e.getMessage());
          metrics.outcome(ImportMetrics.TOO_LARGE);
          return responses.error(HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE, CAR_TOO_LARGE,
              e.getMessage());
        } catch (final RequestBody.DeadlineException e) {
          LOG.debug("import from {} cut: {}", client, e.getMessage());
          metrics.outcome(ImportMetrics.TIMEOUT);
          // A client this slow gets no more of this connection (it would trickle into the
          // discarded rest of its body for as long as it liked).
          final FullHttpResponse response = responses.error(HttpResponseStatus.REQUEST_TIMEOUT,
              IMPORT_TIMEOUT, e.getMessage());
          response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
          return response;
        } catch (final IOException e) {
          metrics.outcome(ImportMetrics.INVALID);
          return responses.error(HttpResponseStatus.BAD_REQUEST, "invalid_car",
              "the body cannot be read: " + e.getMessage());
        } catch (final RuntimeException e) {
          metrics.outcome(ImportMetrics.FAILED);
          throw e;
        } finally {
          slots.release(client);
        }
      }, importThreads);
    } catch (final RejectedExecutionException e) {
      slots.release(client);
      return done(responses.error(ErrorMapping.busy()));
    }
  }

  /** The per-client key of a remote address (by default its IPv4 address, its IPv6 /64). */
  private String clientKey(final SocketAddress remote) {
    return remote instanceof InetSocketAddress inet && inet.getAddress() != null
        ? prefix.key(inet.getAddress()) : String.valueOf(remote);
  }

  /** Imports running now. */
  public int slotsUsed() {
    return slots.used();
  }

  /**
   * The import slots: {@code total} at once, {@link #SLOTS_PER_CLIENT} per client address, so
   * one address cannot hold them all. A small surface-specific count until the node budget
   * ({@code io.relaypinner.common.budget}) hands out import slots and staging disk.
   */
  static final class Slots {
    enum Refusal { ALL, CLIENT }

    private final int total;
    private final Map<String, Integer> byClient = new HashMap<>();
    private int used;

    Slots(final int total) {
      this.total = total;
    }

    /** Null when a slot was taken, else why not. */
    synchronized Refusal tryAcquire(final String client) {
      final int mine = byClient.getOrDefault(client, 0);
      if (mine >= SLOTS_PER_CLIENT) {
        return Refusal.CLIENT;
      }
      if (used >= total) {
        return Refusal.ALL;
      }
      used++;
      byClient.put(client, mine + 1);
      return null;
    }

    synchronized void release(final String client) {
      used--;
      byClient.computeIfPresent(client, (key, n) -> n <= 1 ? null : n - 1);
    }

    synchronized int used() {
      return used;
    }
  }

  private static CompletableFuture<FullHttpResponse> done(final FullHttpResponse response) {
    return CompletableFuture.completedFuture(response);
  }
}
