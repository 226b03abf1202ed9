package io.relaypinner.relay.export;

import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.common.budget.KeyedScopes;
import io.relaypinner.common.budget.Reservation;
import io.relaypinner.common.budget.Resource;
import io.relaypinner.common.budget.Scope;
import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.relay.gateway.CarPlanner;
import io.relaypinner.relay.gateway.CarSections;
import io.relaypinner.relay.gateway.GatewayMetrics;
import io.relaypinner.relay.gateway.SliceInput;
import io.relaypinner.relay.config.ImportConfig;
import io.relaypinner.relay.http.BearerAuth;
import io.relaypinner.relay.http.ClientAddresses;
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
 * like one a peer announced). Imports take a slot from the node budget (the {@code import}
 * scope's {@link Resource#WORK}, {@code RELAY_IMPORT_SLOTS}, and one of the client's
 * {@code import_ip} scope: one per client IP key, the client as {@link ClientAddresses} says,
 * behind a trusted proxy its {@code X-Forwarded-For} client) for as long as they run, and their
 * staged bytes from its {@link Resource#DISK} ({@link ImportStaging}); the body must arrive
 * within {@code RELAY_IMPORT_TIMEOUT_MS} (the route's deadline,
 * {@link io.relaypinner.relay.http.Router.Builder#streamed}). JSON errors in the relay's shape;
 * a refusal is 503 {@code import_busy}, counted in {@code relay_imports_total} and by the
 * budget ({@code relay_resource_limit_hits_total{scope="import"|"import_ip"}}).
 */
public final class ExportRoutes {
  private static final Logger LOG = LoggerFactory.getLogger(ExportRoutes.class);
  public static final String EXPORT = "/pinning/export";
  public static final String IMPORT = "/pinning/import";
  /**
   * The largest CAR {@code POST /pinning/import} takes (staged on disk while it arrives, so each
   * import slot may use this much of the data directory): 128 MiB.
   */
  public static final long MAX_IMPORT_BYTES = ImportConfig.MAX_IMPORT_BYTES;
  /** 413 code of an import over {@link #MAX_IMPORT_BYTES}. */
  public static final String CAR_TOO_LARGE = "car_too_large";
  /**
   * 503 code while every import slot, or the client's one, is taken, or the staging area is
   * full.
   */
  public static final String IMPORT_BUSY = "import_busy";
  /** 408 code of an import whose body did not arrive within {@code RELAY_IMPORT_TIMEOUT_MS}. */
  public static final String IMPORT_TIMEOUT = "import_timeout";

  private final DatabaseExporter exporter;
  private final Scope carMemory;
  private final DatabaseImporter importer;
  private final Blockstore blockstore;
  private final Executor storage;
  private final HttpResponses responses;
  private final GatewayMetrics gatewayMetrics;
  private final ImportMetrics metrics;
  private final BearerAuth auth;
  private final Consumer<OrbitDbAddress> imported;
  private final Scope imports;
  private final KeyedScopes clients;
  private final ClientAddresses addresses;
  /**
   * The threads imports run on, one per slot: an upload may take {@code RELAY_IMPORT_TIMEOUT_MS},
   * and on the storage executor slow uploads held threads the {@code /ipfs/} routes need. Idle
   * threads end after 30 s (daemons; nothing to shut down).
   */
  private final ExecutorService importThreads;

  /**
   * @param staging where the importer stages bodies (its bytes are a metric)
   * @param registry the node's metrics ({@link ImportMetrics})
   * @param imports the node budget's import scope: its {@link Resource#WORK} limit is the
   *     number of imports at once ({@code RELAY_IMPORT_SLOTS})
   * @param clients one scope per client key below {@code imports} (one import each)
   * @param addresses who a request's client is (its key in {@code clients})
   * @param imported told the address of each imported database (the relay queues a sync)
   * @param carMemory the node budget's gateway memory: an export's plan is held from it until
   *     its CAR is sent
   */
  public ExportRoutes(final DatabaseExporter exporter, final DatabaseImporter importer,
      final ImportStaging staging, final Blockstore blockstore, final Executor storage,
      final HttpResponses responses, final GatewayMetrics gatewayMetrics,
      final PrometheusRegistry registry, final Optional<String> apiToken, final Scope imports,
      final KeyedScopes clients, final ClientAddresses addresses,
      final Consumer<OrbitDbAddress> imported, final Scope carMemory) {
    this.carMemory = Objects.requireNonNull(carMemory, "carMemory");
    this.exporter = Objects.requireNonNull(exporter, "exporter");
    this.importer = Objects.requireNonNull(importer, "importer");
    this.blockstore = Objects.requireNonNull(blockstore, "blockstore");
    this.storage = Objects.requireNonNull(storage, "storage");
    this.responses = Objects.requireNonNull(responses, "responses");
    this.gatewayMetrics = Objects.requireNonNull(gatewayMetrics, "gatewayMetrics");
    this.auth = BearerAuth.apiToken(apiToken);
    this.imported = Objects.requireNonNull(imported, "imported");
    this.imports = Objects.requireNonNull(imports, "imports");
    this.clients = Objects.requireNonNull(clients, "clients");
    this.addresses = Objects.requireNonNull(addresses, "addresses");
    final long slots = imports.limits().max(Resource.WORK);
    if (slots < 1 || slots > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("the import scope's slots must be a positive int: "
          + slots);
    }
    this.importThreads = new ThreadPoolExecutor(0, (int) slots, 30, TimeUnit.SECONDS,
        new SynchronousQueue<>(), new DefaultThreadFactory("relay-import", true));
    this.metrics = new ImportMetrics(registry, this::slotsUsed, staging::stagedBytes);
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
        } catch (final CarPlanner.MemoryRefusedException e) {
          gatewayMetrics.limited(GatewayMetrics.LIMIT_CAR_MEMORY);
          return responses.error(HttpResponseStatus.SERVICE_UNAVAILABLE, ErrorCodes.CAR_BUSY,
              e.getMessage());
        }
        // The plan is held until the CAR is sent: its CIDs stay reserved until then.
        final Reservation held;
        try {
          held = CarPlanner.hold(carMemory, plan);
        } catch (final CarPlanner.MemoryRefusedException e) {
          gatewayMetrics.limited(GatewayMetrics.LIMIT_CAR_MEMORY);
          return responses.error(HttpResponseStatus.SERVICE_UNAVAILABLE, ErrorCodes.CAR_BUSY,
              e.getMessage());
        }
        final StreamedResponse response = new StreamedResponse(HttpResponseStatus.OK,
            plan.length(), StreamedResponse.Body.releasing((resume, fileRegions) ->
                new SliceInput(() -> new CarSections(blockstore, CarSections.NO_FILES, plan),
                    plan.length(), storage, resume, gatewayMetrics), held::close));
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
    final String client = addresses.requestKey(request.remoteAddress(), request.headers());
    final Slot slot = Slot.take(clients, client);
    if (slot.refusal() != null) {
      final boolean mine = slot.refusal() == Slot.Refusal.CLIENT;
      metrics.outcome(mine ? ImportMetrics.CLIENT_BUSY : ImportMetrics.BUSY);
      return done(responses.error(HttpResponseStatus.SERVICE_UNAVAILABLE, IMPORT_BUSY,
          mine ? "an import from this address is running, retry when it has ended"
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
          final DatabaseImporter.Result result = importer.importCar(body, slot.scope());
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
        } catch (final ImportStaging.StagingFullException e) {
          LOG.debug("import refused: {}", e.getMessage());
          metrics.outcome(ImportMetrics.BUSY);
          return responses.error(HttpResponseStatus.SERVICE_UNAVAILABLE, IMPORT_BUSY,
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
          slot.close();
        }
      }, importThreads);
    } catch (final RejectedExecutionException e) {
      slot.close();
      return done(responses.error(ErrorMapping.busy()));
    }
  }

  /** Imports running now (the import scope's work held). */
  public int slotsUsed() {
    return (int) imports.used(Resource.WORK);
  }

  /**
   * One import's slot: the client's key held in {@code clients} and one {@link Resource#WORK}
   * reserved from its scope, and so from the node's import scope; or why not.
   */
  record Slot(KeyedScopes.Handle key, Reservation work, Refusal refusal)
      implements AutoCloseable {
    enum Refusal { ALL, CLIENT }

    static Slot take(final KeyedScopes clients, final String client) {
      final KeyedScopes.Handle key = clients.open(client);
      if (key == null) {
        // Too many distinct clients held at once: as busy as every slot taken.
        return new Slot(null, null, Refusal.ALL);
      }
      final Reservation work = key.scope().reserve(Resource.WORK, 1);
      if (work == null) {
        // The client's own scope refuses only when it holds its one slot already.
        final boolean mine = key.scope().available(Resource.WORK) == 0;
        key.close();
        return new Slot(null, null, mine ? Refusal.CLIENT : Refusal.ALL);
      }
      return new Slot(key, work, null);
    }

    /** The client's scope: the staged bytes are reserved from it. */
    Scope scope() {
      return key.scope();
    }

    @Override
    public void close() {
      if (work != null) {
        work.close();
        key.close();
      }
    }
  }

  private static CompletableFuture<FullHttpResponse> done(final FullHttpResponse response) {
    return CompletableFuture.completedFuture(response);
  }
}
