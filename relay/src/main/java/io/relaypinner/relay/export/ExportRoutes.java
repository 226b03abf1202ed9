package io.relaypinner.relay.export;

import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.relay.gateway.CarPlanner;
import io.relaypinner.relay.gateway.GatewayMetrics;
import io.relaypinner.relay.gateway.CarSections;
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
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code GET /pinning/export?address=<db>[&media=true]} (public, like {@code /ipfs/}: a CAR v1
 * of one followed database, streamed) and {@code POST /pinning/import} (a CAR body; needs
 * {@code RELAY_API_TOKEN} when it is set; every entry verified before it is stored; the
 * database is then synced like one a peer announced). JSON errors in the relay's shape.
 */
public final class ExportRoutes {
  private static final Logger LOG = LoggerFactory.getLogger(ExportRoutes.class);
  public static final String EXPORT = "/pinning/export";
  public static final String IMPORT = "/pinning/import";
  /**
   * The largest CAR {@code POST /pinning/import} takes (its blocks are held in memory until
   * every entry is verified, one import at a time): 128 MiB.
   */
  public static final long MAX_IMPORT_BYTES = 128L << 20;
  /** 413 code of an import over {@link #MAX_IMPORT_BYTES}. */
  public static final String CAR_TOO_LARGE = "car_too_large";
  /** 503 code while another import runs. */
  public static final String IMPORT_BUSY = "import_busy";

  private final DatabaseExporter exporter;
  private final DatabaseImporter importer;
  private final Blockstore blockstore;
  private final Executor storage;
  private final HttpResponses responses;
  private final GatewayMetrics metrics;
  private final BearerAuth auth;
  private final Consumer<OrbitDbAddress> imported;
  private final Semaphore importing = new Semaphore(1);

  /**
   * @param imported told the address of each imported database (the relay queues a sync)
   */
  public ExportRoutes(final DatabaseExporter exporter, final DatabaseImporter importer,
      final Blockstore blockstore, final Executor storage, final HttpResponses responses,
      final GatewayMetrics metrics, final Optional<String> apiToken,
      final Consumer<OrbitDbAddress> imported) {
    this.exporter = Objects.requireNonNull(exporter, "exporter");
    this.importer = Objects.requireNonNull(importer, "importer");
    this.blockstore = Objects.requireNonNull(blockstore, "blockstore");
    this.storage = Objects.requireNonNull(storage, "storage");
    this.responses = Objects.requireNonNull(responses, "responses");
    this.metrics = Objects.requireNonNull(metrics, "metrics");
    this.auth = BearerAuth.apiToken(apiToken);
    this.imported = Objects.requireNonNull(imported, "imported");
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
                plan.length(), storage, resume, metrics));
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
    if (!importing.tryAcquire()) {
      return done(responses.error(HttpResponseStatus.SERVICE_UNAVAILABLE, IMPORT_BUSY,
          "another import is running, retry later"));
    }
    // Streamed on this route (the body is read as it arrives, on a storage thread); a body
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
          imported.accept(result.address());
          return responses.json(HttpResponseStatus.OK, Map.of("ok", true,
              "address", result.address().toString(), "entries", result.entries(),
              "rejected", result.rejected(),
              "heads", result.heads().stream().map(Cid::toString).toList(),
              "media", result.media()));
        } catch (final DatabaseImporter.BadImportException e) {
          LOG.debug("import refused: {}", e.getMessage());
          return responses.error(HttpResponseStatus.BAD_REQUEST, "invalid_car", e.getMessage());
        } catch (final RequestBody.TooLargeException e) {
          LOG.debug("import refused: {}", e.getMessage());
          return responses.error(HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE, CAR_TOO_LARGE,
              e.getMessage());
        } catch (final IOException e) {
          return responses.error(HttpResponseStatus.BAD_REQUEST, "invalid_car",
              "the body cannot be read: " + e.getMessage());
        } finally {
          importing.release();
        }
      }, storage);
    } catch (final RejectedExecutionException e) {
      importing.release();
      return done(responses.error(ErrorMapping.busy()));
    }
  }

  private static CompletableFuture<FullHttpResponse> done(final FullHttpResponse response) {
    return CompletableFuture.completedFuture(response);
  }
}
