package io.relaypinner.relay.gateway;

import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.ipfs.blockstore.StoreUnavailableException;
import io.relaypinner.ipfs.pin.CodecLinkResolver;
import io.relaypinner.ipfs.pin.PinStore;
import io.relaypinner.ipfs.unixfs.UnixFsEntry;
import io.relaypinner.ipfs.unixfs.UnixFsException;
import io.relaypinner.ipfs.unixfs.UnixFsReader;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.relay.config.GatewayMode;
import io.relaypinner.relay.http.ErrorCodes;
import io.relaypinner.relay.http.ErrorMapping;
import io.relaypinner.relay.http.HttpResponses;
import io.relaypinner.relay.http.RouteHandler;
import io.relaypinner.relay.http.RouteRequest;
import io.relaypinner.relay.http.StreamedResponse;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code GET /ipfs/<cid>[/<path…>]} and {@code HEAD}, spec 4.6.
 *
 * <p>A CID is served locally when it, or the same multihash and codec under the other CID
 * version (v0 and v1 dag-pb), is pinned as a root; a path inside it is resolved through its
 * directories. In {@link GatewayMode#PINNED_FIRST} anything else goes to the
 * {@link GatewayFallback} (the path resolved block by block, then every block of the target file
 * made present) and the file is streamed from the blockstore. Fetched blocks stay in the
 * blockstore unpinned (the next GC may remove them). The fallback as a whole is bounded by
 * {@code RELAY_IPFS_FALLBACK_TIMEOUT_MS}: beyond it the answer is 504 {@code gateway_timeout};
 * content that no connected peer has therefore ends in 504 too, unless no bitswap peer is
 * connected at all (then the local answer, usually 404, comes at once).
 * {@link GatewayMode#PINNED_ONLY} never touches the network (404). Failures are answered by
 * {@link ErrorMapping}.
 *
 * <p>Pin checks and block reads block on disk, so they run on the storage executor; the body is
 * streamed block by block ({@link SliceInput}), or, for a file that is one raw block, sent from
 * the block's file with {@code sendfile}.
 */
public final class IpfsGatewayRoute implements RouteHandler {
  private static final Logger LOG = LoggerFactory.getLogger(IpfsGatewayRoute.class);
  /** The route's prefix. */
  public static final String PREFIX = "/ipfs/";
  private static final String CACHE_CONTROL = "private, no-store";

  private final PinStore pins;
  private final UnixFsReader reader;
  private final Executor storage;
  private final HttpResponses responses;
  private final GatewayMetrics metrics;
  private final Function<Cid, Optional<FileChannel>> blockFiles;
  private final GatewayFallback fallback;
  /** How fallback failures are answered here (the trustless answers word a few differently). */
  private final ErrorMapping.ContentRoute failures;
  /** Raw blocks and CARs (trustless gateway); null: every request gets the plain answer. */
  private final TrustlessGateway trustless;

  /**
   * A route that streams every file from decoded blocks.
   *
   * @param storage runs blocking storage work; rejecting is answered with 503
   *     {@code ipfs_unavailable}
   */
  public IpfsGatewayRoute(final PinStore pins, final UnixFsReader reader, final Executor storage,
      final HttpResponses responses, final GatewayMetrics metrics) {
    this(pins, reader, storage, responses, metrics, cid -> Optional.empty());
  }

  /**
   * A route that sends files made of one raw block straight from the block's file (zero-copy,
   * e.g. {@code FlatFsBlockstore::openChannel}); others are streamed from decoded blocks.
   *
   * @param blockFiles opens a raw block's file (the route closes it), empty when not a file
   */
  public IpfsGatewayRoute(final PinStore pins, final UnixFsReader reader, final Executor storage,
      final HttpResponses responses, final GatewayMetrics metrics,
      final Function<Cid, Optional<FileChannel>> blockFiles) {
    this(pins, reader, storage, responses, metrics, blockFiles, GatewayFallback.off());
  }

  /**
   * A route whose content that is not pinned here goes to {@code fallback} (when enabled).
   */
  public IpfsGatewayRoute(final PinStore pins, final UnixFsReader reader, final Executor storage,
      final HttpResponses responses, final GatewayMetrics metrics,
      final Function<Cid, Optional<FileChannel>> blockFiles, final GatewayFallback fallback) {
    this(pins, reader, storage, responses, metrics, blockFiles, fallback, null, null);
  }

  /**
   * The full route: plain answers as above, plus the trustless gateway (raw blocks and CAR v1
   * of any block {@code blockstore} holds, {@link TrustlessRequest}) when the request's
   * {@code Accept} or {@code format} asks for it, both with {@code fallback}.
   *
   * @param carLimits bounds on one CAR response
   */
  public IpfsGatewayRoute(final PinStore pins, final UnixFsReader reader, final Executor storage,
      final HttpResponses responses, final GatewayMetrics metrics,
      final Function<Cid, Optional<FileChannel>> blockFiles, final GatewayFallback fallback,
      final Blockstore blockstore, final CarPlanner.Limits carLimits) {
    this(pins, reader, storage, responses, metrics, blockFiles, fallback, blockstore, carLimits,
        io.relaypinner.common.budget.Scope.root("gateway",
            io.relaypinner.common.budget.Limits.NONE,
            io.relaypinner.common.budget.LimitListener.NONE));
  }

  /**
   * As above, CAR plans reserving what they hold from {@code carMemory} (the node budget's
   * {@code gateway} memory scope; no room: 503 {@code car_busy}).
   */
  public IpfsGatewayRoute(final PinStore pins, final UnixFsReader reader, final Executor storage,
      final HttpResponses responses, final GatewayMetrics metrics,
      final Function<Cid, Optional<FileChannel>> blockFiles, final GatewayFallback fallback,
      final Blockstore blockstore, final CarPlanner.Limits carLimits,
      final io.relaypinner.common.budget.Scope carMemory) {
    this.fallback = Objects.requireNonNull(fallback, "fallback");
    this.failures = new ErrorMapping.ContentRoute(fallback.timeout(),
        HttpResponseStatus.NOT_FOUND, ErrorCodes.CONTENT_NOT_FOUND,
        "content cannot be fetched: ");
    this.blockFiles = Objects.requireNonNull(blockFiles, "blockFiles");
    this.pins = Objects.requireNonNull(pins, "pins");
    this.reader = Objects.requireNonNull(reader, "reader");
    this.storage = Objects.requireNonNull(storage, "storage");
    this.responses = Objects.requireNonNull(responses, "responses");
    this.metrics = Objects.requireNonNull(metrics, "metrics");
    this.trustless = blockstore == null ? null : new TrustlessGateway(blockstore, blockFiles, reader,
        new CarPlanner(blockstore, CodecLinkResolver.standard(),
            Objects.requireNonNull(carLimits, "carLimits"), carMemory),
        storage, responses, metrics, this::isPinned, fallback);
  }

  @Override
  public CompletableFuture<FullHttpResponse> handle(final RouteRequest request) {
    final String rest = request.path().startsWith(PREFIX)
        ? request.path().substring(PREFIX.length()) : "";
    final int slash = rest.indexOf('/');
    final String cidText;
    final String path;
    try {
      cidText = decode(slash < 0 ? rest : rest.substring(0, slash));
      path = slash < 0 ? "" : decodePath(rest.substring(slash + 1));
    } catch (final IllegalArgumentException e) {
      return done(error(HttpResponseStatus.BAD_REQUEST, ErrorCodes.INVALID_PATH_ENCODING,
          "invalid percent-encoding in path: " + e.getMessage()));
    }
    if (cidText.isEmpty()) {
      return done(error(HttpResponseStatus.BAD_REQUEST, ErrorCodes.INVALID_CID,
          "missing CID: use /ipfs/<cid>[/<path>]"));
    }
    final Cid cid;
    try {
      cid = Cid.parse(cidText);
    } catch (final RuntimeException e) {
      return done(error(HttpResponseStatus.BAD_REQUEST, ErrorCodes.INVALID_CID,
          "invalid CID: " + e.getMessage()));
    }
    if (path == null) {
      // A decoded segment held '/', which no UnixFS name can contain.
      return done(notFound("no such path in " + cid));
    }
    if (trustless != null) {
      final TrustlessRequest wanted;
      try {
        wanted = TrustlessRequest.parse(request.headers().get(HttpHeaderNames.ACCEPT),
            request.queryParameters());
      } catch (final TrustlessRequest.BadRequest e) {
        return done(error(HttpResponseStatus.BAD_REQUEST, e.code(), e.getMessage()));
      }
      if (wanted.kind() != TrustlessRequest.Kind.PLAIN) {
        return trustless.serve(wanted, cid, path, request.headers());
      }
    }
    final String range = request.headers().get(HttpHeaderNames.RANGE);
    final boolean head = HttpMethod.HEAD.equals(request.method());
    try {
      if (fallback.enabled()) {
        return pinnedCheck(cid).thenCompose(pinned -> pinned
            ? CompletableFuture.supplyAsync(() -> lookUp(cid, path, range, head), storage)
            : fromNetwork(cid, path, range, head));
      }
      return CompletableFuture.supplyAsync(() -> lookUp(cid, path, range, head), storage);
    } catch (final RejectedExecutionException e) {
      return done(error(ErrorMapping.busy()));
    }
  }

  /** On the storage executor: pin check, path resolution, then the streamed answer. */
  private FullHttpResponse lookUp(final Cid cid, final String path, final String rangeHeader,
      final boolean head) {
    final boolean pinned;
    try {
      pinned = isPinned(cid);
    } catch (final StoreUnavailableException e) {
      throw e;   // 503 store_unavailable (HttpDispatcher)
    } catch (final RuntimeException e) {
      LOG.error("pin check for {} failed", cid, e);
      return error(HttpResponseStatus.INTERNAL_SERVER_ERROR, ErrorCodes.INTERNAL_ERROR,
          "pin check failed");
    }
    if (!pinned) {
      return notFound(cid + " is not pinned on this node");
    }
    return serveLocal(cid, path, rangeHeader, head, ResponseHold.none());
  }

  /**
   * On the storage executor: the answer from the blockstore (pinned, or fetched just now), a
   * streamed body carrying {@code hold}.
   */
  private FullHttpResponse serveLocal(final Cid cid, final String path, final String rangeHeader,
      final boolean head, final ResponseHold hold) {
    if (path.isEmpty() && !head && cid.codec() == Multicodec.RAW.code()) {
      // A raw block is its own content: serve its file without reading it into memory first.
      final Optional<FileChannel> opened = openBlockFile(cid);
      if (opened.isPresent()) {
        final long size = sizeOf(opened.get());
        if (size >= 0) {
          return answer(new UnixFsEntry(cid, UnixFsEntry.Kind.RAW, size),
              ByteRange.parse(rangeHeader, size), false, opened, hold);
        }
      }
    }
    final UnixFsEntry entry;
    try {
      entry = reader.resolve(cid, path);
    } catch (final UnixFsException e) {
      LOG.debug("cannot resolve /ipfs/{}/{}: {}", cid, path, e.getMessage());
      return notFound(switch (e.reason()) {
        case MISSING_BLOCK -> "content not available offline";
        case NOT_FOUND, NOT_A_DIRECTORY -> "no such path in " + cid;
        default -> "content cannot be served: " + e.getMessage();
      });
    } catch (final UncheckedIOException e) {
      LOG.warn("content store read for {} failed: {}", cid, e.toString());
      return error(HttpResponseStatus.SERVICE_UNAVAILABLE, ErrorCodes.IPFS_UNAVAILABLE,
          "content store not available");
    }
    if (entry.kind().isDirectory()) {
      return error(HttpResponseStatus.BAD_REQUEST, ErrorCodes.DIRECTORY_PATH_REQUIRED,
          "is a directory; directories are not listed: add a file path");
    }
    if (!entry.kind().isFile()) {
      return notFound("not a file: " + entry.kind().name().toLowerCase(Locale.ROOT));
    }
    return answer(entry, ByteRange.parse(rangeHeader, entry.size()), head, Optional.empty(),
        hold);
  }

  /** Whether {@code cid} is pinned (on the storage executor); a failed check counts as no. */
  private CompletableFuture<Boolean> pinnedCheck(final Cid cid) {
    return CompletableFuture.supplyAsync(() -> {
      try {
        return isPinned(cid);
      } catch (final StoreUnavailableException e) {
        throw e;   // 503 store_unavailable (HttpDispatcher), not a network fetch
      } catch (final RuntimeException e) {
        LOG.warn("pin check for {} failed: {}", cid, e.toString());
        return false;
      }
    }, storage);
  }

  /**
   * Content not pinned here: the {@link GatewayFallback} makes the file present (or finds nobody
   * to ask), then it is served like pinned content. What is held under {@code cid} stays from
   * before the fetch until the body ends ({@link GatewayFallback#holdDag}): other requests'
   * admissions may evict the file's cached blocks while it streams, and GC then deleted them,
   * cutting the body short.
   */
  private CompletableFuture<FullHttpResponse> fromNetwork(final Cid cid, final String path,
      final String range, final boolean head) {
    final ResponseHold hold = new ResponseHold(fallback.holdDag(cid));
    final CompletableFuture<FullHttpResponse> answer;
    try {
      answer = fetchAndServe(cid, path, range, head, hold);
    } catch (final RuntimeException | Error e) {
      hold.settle();
      throw e;
    }
    answer.whenComplete((response, failure) -> hold.settle());
    return answer;
  }

  private CompletableFuture<FullHttpResponse> fetchAndServe(final Cid cid, final String path,
      final String range, final boolean head, final ResponseHold hold) {
    return fallback.fetch(cid, path, GatewayFallback.Need.UNIXFS)
        .thenApplyAsync(done -> serveLocal(cid, path, range, head, hold), storage)
        .exceptionally(failure -> {
          final ErrorMapping.Answer answer = ErrorMapping.content(failure, failures)
              .orElseThrow(() -> ErrorMapping.passOn(failure));
          if (answer.status().equals(HttpResponseStatus.NOT_FOUND)) {
            LOG.debug("network fallback for {} failed: {}", cid,
                ErrorMapping.unwrap(failure).toString());
          }
          metrics.answered(answer);
          return error(answer);
        });
  }

  /**
   * The 200/206/416 answer for a file.
   *
   * @param opened the file's block file when already open (closed here on a 416)
   * @param hold carried by a body streamed from blocks (a file body needs none: an open block
   *     file stays readable when GC deletes it)
   */
  private FullHttpResponse answer(final UnixFsEntry entry, final ByteRange range,
      final boolean head, final Optional<FileChannel> opened, final ResponseHold hold) {
    final long size = entry.size();
    if (range.kind() == ByteRange.Kind.UNSATISFIABLE) {
      opened.ifPresent(IpfsGatewayRoute::closeQuietly);
      final FullHttpResponse response = error(HttpResponseStatus.REQUESTED_RANGE_NOT_SATISFIABLE,
          ErrorCodes.RANGE_NOT_SATISFIABLE, "range not satisfiable for " + size + " bytes");
      response.headers().set(HttpHeaderNames.CONTENT_RANGE, "bytes */" + size);
      response.headers().set(HttpHeaderNames.ACCEPT_RANGES, HttpHeaderValues.BYTES);
      return response;
    }
    final boolean partial = range.kind() == ByteRange.Kind.PARTIAL;
    final long start = range.start();
    final long length = Math.max(0, range.length());
    final Cid file = entry.cid();
    final HttpResponseStatus status =
        partial ? HttpResponseStatus.PARTIAL_CONTENT : HttpResponseStatus.OK;
    final Optional<FileChannel> blockFile = opened.isPresent() ? opened
        : entry.kind() == UnixFsEntry.Kind.RAW && !head ? openBlockFile(file) : Optional.empty();
    final StreamedResponse response = blockFile.isPresent()
        ? StreamedResponse.ofFile(status,
            new StreamedResponse.FileBody(blockFile.get(), start, length, metrics::bytes))
        : new StreamedResponse(status, length, hold.carry((resume, fileRegions) ->
            new SliceInput(() -> BodyPiece.of(reader.slices(file, start, length)), length,
                storage, resume, metrics)));
    response.headers()
        .set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_OCTET_STREAM)
        .set(HttpHeaderNames.CACHE_CONTROL, CACHE_CONTROL)
        .set(HttpHeaderNames.ETAG, "\"" + file + "\"")
        .set(HttpHeaderNames.ACCEPT_RANGES, HttpHeaderValues.BYTES);
    if (partial) {
      response.headers().set(HttpHeaderNames.CONTENT_RANGE,
          "bytes " + start + "-" + range.end() + "/" + size);
    }
    metrics.request(response.status().code());
    return response;
  }

  /** The size of an open block file, or -1 (the file is closed) when it cannot be read. */
  private static long sizeOf(final FileChannel file) {
    try {
      return file.size();
    } catch (final IOException e) {
      LOG.debug("cannot stat a block file: {}", e.toString());
      closeQuietly(file);
      return -1;
    }
  }

  private static void closeQuietly(final FileChannel file) {
    try {
      file.close();
    } catch (final IOException e) {
      // Read-only: nothing can be lost by a failed close.
      LOG.debug("closing a block file failed: {}", e.toString());
    }
  }

  /** The raw block's file, or empty to stream it from decoded blocks instead. */
  private Optional<FileChannel> openBlockFile(final Cid cid) {
    try {
      return blockFiles.apply(cid);
    } catch (final RuntimeException e) {
      // Streaming from get() reports the same problem properly (404, or a closed connection).
      LOG.debug("no zero-copy for {}: {}", cid, e.toString());
      return Optional.empty();
    }
  }

  /**
   * Pinned under any spelling of the CID: the pin store compares canonical CIDs, so the v0 and v1
   * forms of a dag-pb CID (Kubo and Helia pin them interchangeably) are one pin.
   */
  private boolean isPinned(final Cid cid) {
    return pins.isPinned(cid);
  }

  private FullHttpResponse notFound(final String message) {
    return error(HttpResponseStatus.NOT_FOUND, ErrorCodes.CONTENT_NOT_FOUND, message);
  }

  private FullHttpResponse error(final HttpResponseStatus status, final String code,
      final String message) {
    metrics.request(status.code());
    return responses.error(status, code, message);
  }

  private FullHttpResponse error(final ErrorMapping.Answer answer) {
    return error(answer.status(), answer.code(), answer.message());
  }

  private static CompletableFuture<FullHttpResponse> done(final FullHttpResponse response) {
    return CompletableFuture.completedFuture(response);
  }

  /**
   * The path inside the CID, segments decoded one by one; {@code null} when a decoded segment
   * contains {@code /} (it would change the path's structure).
   */
  private static String decodePath(final String raw) {
    final StringBuilder out = new StringBuilder();
    for (final String segment : raw.split("/", -1)) {
      final String decoded = decode(segment);
      if (decoded.indexOf('/') >= 0) {
        return null;
      }
      if (!decoded.isEmpty()) {
        out.append('/').append(decoded);
      }
    }
    return out.toString();
  }

  /**
   * Strict percent-decoding of one path segment to UTF-8 ({@code +} stays a plus: this is a
   * path, not a form).
   *
   * @throws IllegalArgumentException on a truncated or non-hex escape, or bytes not UTF-8
   */
  static String decode(final String segment) {
    if (segment.indexOf('%') < 0) {
      return segment;
    }
    final ByteArrayOutputStream bytes = new ByteArrayOutputStream(segment.length());
    for (int i = 0; i < segment.length(); i++) {
      final char c = segment.charAt(i);
      if (c != '%') {
        final byte[] encoded = String.valueOf(c).getBytes(StandardCharsets.UTF_8);
        bytes.write(encoded, 0, encoded.length);
        continue;
      }
      if (i + 2 >= segment.length()) {
        throw new IllegalArgumentException("truncated escape");
      }
      final int high = Character.digit(segment.charAt(i + 1), 16);
      final int low = Character.digit(segment.charAt(i + 2), 16);
      if (high < 0 || low < 0) {
        throw new IllegalArgumentException("bad escape '" + segment.substring(i, i + 3) + "'");
      }
      bytes.write(high << 4 | low);
      i += 2;
    }
    try {
      return StandardCharsets.UTF_8.newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(bytes.toByteArray())).toString();
    } catch (final CharacterCodingException e) {
      throw new IllegalArgumentException("escaped bytes are not UTF-8", e);
    }
  }
}
