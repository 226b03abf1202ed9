package io.relaypinner.relay.pinsvc;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.buffer.ByteBufInputStream;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.relay.http.BearerAuth;
import io.relaypinner.relay.http.HttpResponses;
import io.relaypinner.relay.http.RouteHandler;
import io.relaypinner.relay.http.RouteRequest;
import java.io.IOException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * The IPFS Pinning Service API v1 over HTTP: {@code GET/POST /pins} and
 * {@code GET/POST/DELETE /pins/{requestid}}, bearer tokens from
 * {@code RELAY_PINNING_SERVICE_TOKENS} / {@code RELAY_PINNING_SERVICE_TOKENS_FILE} (none: 401 to
 * everything), errors in the spec's shape {@code {"error":{"reason","details"}}}. Every request,
 * reads included, needs a token: a token sees only its own requests. Engine calls run on the
 * storage executor (they touch the datastore).
 */
public final class PinsRoute implements RouteHandler {
  /** The collection path; single requests live under {@code /pins/}. */
  public static final String PATH = "/pins";
  private static final Set<String> STATUSES = Set.of(PinStatusRecord.QUEUED,
      PinStatusRecord.PINNING, PinStatusRecord.PINNED, PinStatusRecord.FAILED);
  private static final Set<String> MATCHES = Set.of("exact", "iexact", "partial", "ipartial");

  @JsonPropertyOrder({"reason", "details"})
  record Failure(String reason, String details) {}

  record FailureBody(Failure error) {}

  record Results(int count, List<PinStatusRecord> results) {}

  private final PinningServiceEngine engine;
  private final BearerAuth auth;
  private final Executor storage;
  private final HttpResponses responses;
  private final ObjectMapper json;

  /** @param tokens the accepted bearer tokens; empty: every request is refused with 401 */
  public PinsRoute(final PinningServiceEngine engine, final List<String> tokens,
      final Executor storage, final HttpResponses responses) {
    this.engine = Objects.requireNonNull(engine, "engine");
    this.auth = BearerAuth.anyOf(tokens);
    this.storage = Objects.requireNonNull(storage, "storage");
    this.responses = Objects.requireNonNull(responses, "responses");
    this.json = responses.mapper();
  }

  /**
   * Whether a request with {@code authorization} (the header, or null) presents an accepted
   * token: checked on the head, before the body is read ({@code Router.Builder#authorizedBody}).
   */
  public boolean authorized(final String authorization) {
    return auth.token(authorization).isPresent();
  }

  @Override
  public CompletableFuture<FullHttpResponse> handle(final RouteRequest request) {
    final Optional<String> owner = auth.token(request.headers().get(
        HttpHeaderNames.AUTHORIZATION)).map(PinningServiceEngine::owner);
    if (owner.isEmpty()) {
      return CompletableFuture.completedFuture(BearerAuth.challenge(failure(401, "UNAUTHORIZED",
          auth.hasTokens() ? "Authorization: Bearer <token> required"
              : "the pinning service is not enabled on this relay"
                  + " (RELAY_PINNING_SERVICE_TOKENS)")));
    }
    final String path = request.path();
    final String id = path.length() > PATH.length() + 1 ? path.substring(PATH.length() + 1) : "";
    final HttpMethod method = request.method();
    // Parse on the loop (the request is only valid until the future completes), work off it.
    final Work work;
    try {
      work = parse(request, method, id);
    } catch (final PinningServiceEngine.RequestException e) {
      return CompletableFuture.completedFuture(failure(e.status(), e.reason(), e.getMessage()));
    }
    try {
      return CompletableFuture.supplyAsync(() -> {
        try {
          return work.run(owner.get());
        } catch (final PinningServiceEngine.RequestException e) {
          return failure(e.status(), e.reason(), e.getMessage());
        }
      }, storage);
    } catch (final RejectedExecutionException e) {
      return CompletableFuture.completedFuture(failure(503, "BUSY", "retry later"));
    }
  }

  @FunctionalInterface
  private interface Work {
    FullHttpResponse run(String owner) throws PinningServiceEngine.RequestException;
  }

  private Work parse(final RouteRequest request, final HttpMethod method, final String id)
      throws PinningServiceEngine.RequestException {
    if (id.isEmpty()) {
      if (HttpMethod.POST.equals(method)) {
        final PinStatusRecord.Pin pin = body(request);
        return owner -> accepted(engine.add(owner, pin));
      }
      if (HttpMethod.GET.equals(method) || HttpMethod.HEAD.equals(method)) {
        final PinningServiceEngine.Filter filter = filter(request);
        return owner -> {
          final PinningServiceEngine.Page page = engine.list(owner, filter);
          return responses.json(HttpResponseStatus.OK, new Results(page.count(),
              page.results().stream().map(PinStatusRecord::forClient).toList()));
        };
      }
    } else if (id.indexOf('/') < 0 && id.length() <= 128) {
      if (HttpMethod.GET.equals(method) || HttpMethod.HEAD.equals(method)) {
        return owner -> engine.get(owner, id)
            .map(r -> responses.json(HttpResponseStatus.OK, r.forClient()))
            .orElseGet(() -> failure(404, "NOT_FOUND", "no pin request " + id));
      }
      if (HttpMethod.POST.equals(method)) {
        final PinStatusRecord.Pin pin = body(request);
        return owner -> accepted(engine.replace(owner, id, pin));
      }
      if (HttpMethod.DELETE.equals(method)) {
        return owner -> engine.remove(owner, id)
            ? HttpResponses.bytes(HttpResponseStatus.ACCEPTED, HttpResponses.APPLICATION_JSON,
                new byte[0])
            : failure(404, "NOT_FOUND", "no pin request " + id);
      }
    }
    return owner -> failure(404, "NOT_FOUND", "no such pinning service route");
  }

  private FullHttpResponse accepted(final PinStatusRecord record) {
    return responses.json(HttpResponseStatus.ACCEPTED, record.forClient());
  }

  private PinStatusRecord.Pin body(final RouteRequest request)
      throws PinningServiceEngine.RequestException {
    try (ByteBufInputStream in = new ByteBufInputStream(request.content().duplicate())) {
      final PinStatusRecord.Pin pin = json.readValue((java.io.InputStream) in,
          PinStatusRecord.Pin.class);
      if (pin == null) {
        throw new PinningServiceEngine.RequestException(400, "BAD_REQUEST",
            "the body must be a Pin object");
      }
      return pin;
    } catch (final IOException e) {
      throw new PinningServiceEngine.RequestException(400, "BAD_REQUEST",
          "the body must be a Pin object: " + e.getMessage());
    }
  }

  private PinningServiceEngine.Filter filter(final RouteRequest request)
      throws PinningServiceEngine.RequestException {
    Optional<Set<String>> cids = Optional.empty();
    final Optional<String> cidText = request.queryParameter("cid");
    if (cidText.isPresent()) {
      final Set<String> set = new LinkedHashSet<>(List.of(cidText.get().split(",")));
      if (set.isEmpty() || set.size() > 10) {
        throw bad("cid takes 1 to 10 comma-separated CIDs");
      }
      for (final String cid : set) {
        try {
          Cid.parse(cid);
        } catch (final RuntimeException e) {
          throw bad("invalid cid " + cid + ": " + e.getMessage());
        }
      }
      cids = Optional.of(set);
    }
    final Optional<String> name = request.queryParameter("name");
    if (name.isPresent() && name.get().length() > 255) {
      throw bad("name longer than 255 characters");
    }
    final String match = request.queryParameter("match").orElse("exact");
    if (!MATCHES.contains(match)) {
      throw bad("match must be exact, iexact, partial or ipartial");
    }
    final Set<String> statuses = new LinkedHashSet<>(
        List.of(request.queryParameter("status").orElse(PinStatusRecord.PINNED).split(",")));
    if (!STATUSES.containsAll(statuses)) {
      throw bad("status takes queued, pinning, pinned and failed");
    }
    final Optional<Instant> before = time(request.queryParameter("before"), "before");
    final Optional<Instant> after = time(request.queryParameter("after"), "after");
    final int limit;
    try {
      limit = Integer.parseInt(request.queryParameter("limit").orElse("10"));
    } catch (final NumberFormatException e) {
      throw bad("limit must be an integer from 1 to 1000");
    }
    if (limit < 1 || limit > 1000) {
      throw bad("limit must be an integer from 1 to 1000");
    }
    Map<String, String> meta = Map.of();
    final Optional<String> metaText = request.queryParameter("meta");
    if (metaText.isPresent()) {
      try {
        meta = json.readValue(metaText.get(), new TypeReference<Map<String, String>>() { });
      } catch (final IOException e) {
        throw bad("meta must be a JSON object of strings");
      }
    }
    return new PinningServiceEngine.Filter(cids, name, match, statuses, before, after, limit,
        meta == null ? Map.of() : meta);
  }

  private static Optional<Instant> time(final Optional<String> text, final String name)
      throws PinningServiceEngine.RequestException {
    if (text.isEmpty()) {
      return Optional.empty();
    }
    try {
      return Optional.of(OffsetDateTime.parse(text.get()).toInstant());
    } catch (final DateTimeParseException e) {
      throw bad(name + " must be an ISO 8601 timestamp");
    }
  }

  private static PinningServiceEngine.RequestException bad(final String details) {
    return new PinningServiceEngine.RequestException(400, "BAD_REQUEST", details);
  }

  private FullHttpResponse failure(final int status, final String reason,
      final String details) {
    return responses.json(HttpResponseStatus.valueOf(status),
        new FailureBody(new Failure(reason, details)));
  }
}
