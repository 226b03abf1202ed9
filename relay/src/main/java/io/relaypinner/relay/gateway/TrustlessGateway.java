package io.relaypinner.relay.gateway;

import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.relaypinner.common.budget.Reservation;
import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.ipfs.unixfs.UnixFsException;
import io.relaypinner.ipfs.unixfs.UnixFsReader;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.relay.http.ErrorCodes;
import io.relaypinner.relay.http.ErrorMapping;
import io.relaypinner.relay.http.HttpResponses;
import io.relaypinner.relay.http.StreamedResponse;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.zip.CRC32;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The trustless gateway answers of {@code /ipfs/<cid>} (specs.ipfs.tech/http-gateways/
 * trustless-gateway): a raw block or a CAR v1, with the headers the spec requires
 * ({@code Content-Type}, {@code Content-Disposition: attachment}, {@code X-Content-Type-Options:
 * nosniff}, {@code Vary: Accept}, an {@code ETag} per format and CAR parameters, immutable
 * caching) and {@code If-None-Match}.
 *
 * <p>Any block the blockstore holds is served (they are verifiable by hash, and the blocks
 * inside pinned DAGs are what block-by-block clients such as Helia's trustless broker ask for).
 * In {@code pinned-first} mode, what is missing is fetched by the same {@link GatewayFallback}
 * as for plain answers (the block, or the DAG under the path's target), within
 * {@code RELAY_IPFS_FALLBACK_TIMEOUT_MS}; failures are answered by {@link ErrorMapping}. CARs are planned before the first byte
 * ({@link CarPlanner}: exact length, limits refused up front with 400 {@code car_too_large}) and
 * streamed from the storage executor ({@link CarSections}: large blocks with {@code sendfile}).
 */
final class TrustlessGateway {
  private static final Logger LOG = LoggerFactory.getLogger(TrustlessGateway.class);
  static final String IMMUTABLE = "public, max-age=29030400, immutable";

  private final Blockstore blockstore;
  private final Function<Cid, Optional<FileChannel>> blockFiles;
  private final UnixFsReader reader;
  private final CarPlanner planner;
  private final Executor storage;
  private final HttpResponses responses;
  private final GatewayMetrics metrics;
  private final Predicate<Cid> pinned;
  private final GatewayFallback fallback;
  private final ErrorMapping.ContentRoute failures;

  /**
   * @param blockFiles opens a block's file for zero-copy sending (the caller closes it), empty
   *     when blocks are not files
   */
  TrustlessGateway(final Blockstore blockstore,
      final Function<Cid, Optional<FileChannel>> blockFiles, final UnixFsReader reader,
      final CarPlanner planner, final Executor storage, final HttpResponses responses,
      final GatewayMetrics metrics, final Predicate<Cid> pinned, final GatewayFallback fallback) {
    this.blockstore = Objects.requireNonNull(blockstore, "blockstore");
    this.blockFiles = Objects.requireNonNull(blockFiles, "blockFiles");
    this.reader = Objects.requireNonNull(reader, "reader");
    this.planner = Objects.requireNonNull(planner, "planner");
    this.storage = Objects.requireNonNull(storage, "storage");
    this.responses = Objects.requireNonNull(responses, "responses");
    this.metrics = Objects.requireNonNull(metrics, "metrics");
    this.pinned = Objects.requireNonNull(pinned, "pinned");
    this.fallback = Objects.requireNonNull(fallback, "fallback");
    this.failures = new ErrorMapping.ContentRoute(fallback.timeout(),
        HttpResponseStatus.BAD_REQUEST, "car_too_large", "content cannot be served: ");
  }

  /** Answers a raw or CAR request for {@code cid} and {@code path} (already decoded). */
  CompletableFuture<FullHttpResponse> serve(final TrustlessRequest request, final Cid cid,
      final String path, final HttpHeaders headers) {
    final String etag = etag(request, cid, path);
    final String ifNoneMatch = headers.get(HttpHeaderNames.IF_NONE_MATCH);
    if (ifNoneMatch != null && matches(ifNoneMatch, etag)) {
      final FullHttpResponse notModified = HttpResponses.bytes(HttpResponseStatus.NOT_MODIFIED,
          request.kind() == TrustlessRequest.Kind.RAW ? TrustlessRequest.RAW_TYPE
              : carType(request), new byte[0]);
      common(notModified.headers(), etag);
      metrics.request(304);
      return CompletableFuture.completedFuture(notModified);
    }
    if (request.kind() == TrustlessRequest.Kind.RAW && !path.isEmpty()) {
      return done(error(HttpResponseStatus.BAD_REQUEST, "invalid_path",
          "raw blocks are served by CID only: /ipfs/<cid>?format=raw, no path"));
    }
    // A CAR streams blocks that may be cached, not pinned: what is held under the CID stays
    // from before the fetch until the CAR is sent (GatewayFallback.holdDag), so other requests'
    // admissions and GC cannot delete it mid-body.
    final ResponseHold hold = request.kind() == TrustlessRequest.Kind.RAW ? ResponseHold.none()
        : new ResponseHold(fallback.holdDag(cid));
    final CompletableFuture<FullHttpResponse> answer;
    try {
      final CompletableFuture<?> ready = ensure(request, cid, path);
      answer = ready.thenApplyAsync(done -> request.kind() == TrustlessRequest.Kind.RAW
              ? raw(cid, etag) : car(request, cid, path, etag, hold), storage)
          .exceptionally(this::failure);
    } catch (final RejectedExecutionException e) {
      hold.settle();
      return done(busy());
    } catch (final RuntimeException | Error e) {
      hold.settle();
      throw e;
    }
    answer.whenComplete((response, failure) -> hold.settle());
    return answer;
  }

  /**
   * Completes once the content is as present as it can be: at once when it is here (the block
   * held, or for a CAR its root pinned) or the fallback is off or has nobody to ask; else after
   * the {@link GatewayFallback} fetched the block, or for a CAR of scope {@code all} or
   * {@code entity} the DAG under the path's target.
   */
  private CompletableFuture<?> ensure(final TrustlessRequest request, final Cid cid,
      final String path) {
    if (!fallback.enabled()) {
      return CompletableFuture.completedFuture(null);
    }
    final boolean raw = request.kind() == TrustlessRequest.Kind.RAW;
    final GatewayFallback.Need need = raw || request.scope() == TrustlessRequest.Scope.BLOCK
        ? GatewayFallback.Need.BLOCK : GatewayFallback.Need.DAG;
    return CompletableFuture.supplyAsync(() -> raw ? blockstore.has(cid) : pinned.test(cid),
            storage)
        .thenCompose(here -> here ? CompletableFuture.completedFuture(null)
            : fallback.fetch(cid, path, need));
  }

  private FullHttpResponse raw(final Cid cid, final String etag) {
    final Optional<byte[]> block = blockstore.get(cid);
    if (block.isEmpty()) {
      return error(HttpResponseStatus.NOT_FOUND, ErrorCodes.CONTENT_NOT_FOUND,
          cid + " is not held here");
    }
    final FullHttpResponse response = HttpResponses.bytes(HttpResponseStatus.OK,
        TrustlessRequest.RAW_TYPE, block.get());
    common(response.headers(), etag);
    response.headers().set(HttpHeaderNames.CONTENT_DISPOSITION,
        "attachment; filename=\"" + cid + ".bin\"");
    metrics.request(200);
    metrics.bytes(block.get().length);
    return response;
  }

  private FullHttpResponse car(final TrustlessRequest request, final Cid cid, final String path,
      final String etag, final ResponseHold hold) {
    final List<Cid> pathBlocks = new ArrayList<>();
    final Cid terminal;
    try {
      terminal = resolvePath(cid, path, pathBlocks);
    } catch (final UnixFsException e) {
      return error(HttpResponseStatus.NOT_FOUND, ErrorCodes.CONTENT_NOT_FOUND,
          "cannot resolve the path: " + e.getMessage());
    }
    final CarPlanner.Plan plan;
    try {
      plan = planner.plan(cid, pathBlocks, terminal, request.scope(), request.entityBytes(),
          request.dups());
    } catch (final TrustlessRequest.BadRequest e) {
      return error(HttpResponseStatus.BAD_REQUEST, e.code(), e.getMessage());
    } catch (final CarPlanner.RootMissingException e) {
      return error(HttpResponseStatus.NOT_FOUND, ErrorCodes.CONTENT_NOT_FOUND, e.getMessage());
    } catch (final CarPlanner.TooLargeException e) {
      metrics.limited(e.limit().label());
      return error(HttpResponseStatus.BAD_REQUEST, "car_too_large", e.getMessage());
    } catch (final CarPlanner.MemoryRefusedException e) {
      metrics.limited(GatewayMetrics.LIMIT_CAR_MEMORY);
      return error(HttpResponseStatus.SERVICE_UNAVAILABLE, ErrorCodes.CAR_BUSY, e.getMessage());
    } finally {
      metrics.planHeld(planner.peakHeldBytes());
    }
    if (!plan.complete()) {
      LOG.debug("CAR for {} ends early: a block of the DAG is missing", cid);
    }
    // The plan is held until the CAR is sent: its CIDs stay reserved until then.
    final Reservation held;
    try {
      held = planner.hold(plan);
    } catch (final CarPlanner.MemoryRefusedException e) {
      metrics.limited(GatewayMetrics.LIMIT_CAR_MEMORY);
      return error(HttpResponseStatus.SERVICE_UNAVAILABLE, ErrorCodes.CAR_BUSY, e.getMessage());
    }
    // Plain connections send large blocks straight from their files; TLS ones read them.
    final StreamedResponse response = new StreamedResponse(HttpResponseStatus.OK, plan.length(),
        hold.carry(StreamedResponse.Body.releasing((resume, fileRegions) -> new SliceInput(
            () -> new CarSections(blockstore, fileRegions ? blockFiles : CarSections.NO_FILES,
                plan), plan.length(), storage, resume, metrics), held::close)));
    response.headers().set(HttpHeaderNames.CONTENT_TYPE, carType(request));
    common(response.headers(), etag);
    response.headers().set(HttpHeaderNames.CONTENT_DISPOSITION,
        "attachment; filename=\"" + cid + ".car\"");
    metrics.request(200);
    return response;
  }

  /**
   * The blocks a path goes through (into {@code through}: each directory and, in HAMT-sharded
   * ones, the inner shards on the way) and the CID it ends at.
   */
  private Cid resolvePath(final Cid root, final String path, final List<Cid> through) {
    if (path.isEmpty()) {
      return root;
    }
    return reader.resolve(root, path, through::add).cid();
  }

  private FullHttpResponse failure(final Throwable failure) {
    final ErrorMapping.Answer answer = ErrorMapping.content(failure, this.failures)
        .orElseThrow(() -> ErrorMapping.passOn(failure));
    if (answer.status().equals(HttpResponseStatus.NOT_FOUND)) {
      LOG.debug("trustless answer failed: {}", ErrorMapping.unwrap(failure).toString());
    }
    metrics.answered(answer);
    return error(answer);
  }

  private FullHttpResponse busy() {
    return error(ErrorMapping.busy());
  }

  private static void common(final HttpHeaders headers, final String etag) {
    headers.set(HttpHeaderNames.ETAG, etag)
        .set(HttpHeaderNames.CACHE_CONTROL, IMMUTABLE)
        .set("X-Content-Type-Options", "nosniff")
        .add(HttpHeaderNames.VARY, "Accept");
  }

  static String carType(final TrustlessRequest request) {
    return TrustlessRequest.CAR_TYPE + "; version=1; order=dfs; dups="
        + (request.dups() ? "y" : "n");
  }

  /** {@code "<cid>.raw"}, or {@code "<cid>.car.<crc of path and CAR parameters>"}. */
  static String etag(final TrustlessRequest request, final Cid cid, final String path) {
    if (request.kind() == TrustlessRequest.Kind.RAW) {
      return "\"" + cid + ".raw\"";
    }
    final CRC32 crc = new CRC32();
    crc.update((path + "|" + request.scope() + "|"
        + request.entityBytes().map(TrustlessRequest.EntityBytes::text).orElse("") + "|"
        + request.dups()).getBytes(StandardCharsets.UTF_8));
    return "\"" + cid + ".car." + Long.toHexString(crc.getValue()) + "\"";
  }

  private static boolean matches(final String ifNoneMatch, final String etag) {
    for (final String candidate : ifNoneMatch.split(",")) {
      final String trimmed = candidate.trim();
      if (trimmed.equals("*") || trimmed.equals(etag) || trimmed.equals("W/" + etag)) {
        return true;
      }
    }
    return false;
  }

  private FullHttpResponse error(final HttpResponseStatus status, final String code,
      final String message) {
    metrics.request(status.code());
    final FullHttpResponse response = responses.error(status, code, message);
    response.headers().add(HttpHeaderNames.VARY, "Accept");
    return response;
  }

  private FullHttpResponse error(final ErrorMapping.Answer answer) {
    return error(answer.status(), answer.code(), answer.message());
  }

  private static CompletableFuture<FullHttpResponse> done(final FullHttpResponse response) {
    return CompletableFuture.completedFuture(response);
  }
}
