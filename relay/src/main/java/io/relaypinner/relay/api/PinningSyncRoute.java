package io.relaypinner.relay.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.relay.http.ErrorCodes;
import io.relaypinner.relay.http.HttpResponses;
import io.relaypinner.relay.http.RouteHandler;
import io.relaypinner.relay.http.RouteRequest;
import io.relaypinner.relay.sync.SyncEngine;
import io.relaypinner.relay.sync.SyncOutcome;
import io.relaypinner.relay.sync.SyncResult;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * {@code POST /pinning/sync}, spec 2.6 and 4.5: syncs one database through the {@link SyncEngine}
 * and answers with the result, without blocking the event loop (the response is completed from
 * the engine's future).
 *
 * <p>Order of checks: bearer token when {@code RELAY_API_TOKEN} is set (401
 * {@code unauthorized}; checked by {@link RelayRoutes} before this route runs, the one rule of
 * the token routes), body size (413 {@code payload_too_large} above {@link #MAX_BODY}), JSON
 * (400 {@code invalid_json}), address (the body's {@code dbAddress} when it is a non-empty string
 * after trimming, else the query's {@code dbAddress} or {@code address}; none: 400
 * {@code missing_db_address}; not a database address by the one rule of
 * {@link OrbitDbAddress#parse}, base58btc dag-cbor: 400 {@code invalid_address}, never queued nor
 * counted). Then 200 with the result, 500 {@code sync_failed}, or 504 {@code sync_timeout} while
 * the sync keeps running.
 */
public final class PinningSyncRoute implements RouteHandler {
  /** Largest accepted body; an address is well under 200 bytes. */
  public static final int MAX_BODY = JsonRequest.MAX_BODY;

  /** The sync result of spec 2.6; {@code coalesced} only when true. */
  @JsonPropertyOrder({"ok", "dbAddress", "receivedUpdate", "fallbackScanUsed",
      "extractedMediaCids", "coalesced"})
  public record SyncAnswer(boolean ok, String dbAddress, boolean receivedUpdate,
      boolean fallbackScanUsed, List<String> extractedMediaCids,
      @JsonInclude(JsonInclude.Include.NON_NULL) Boolean coalesced) {

    static SyncAnswer of(final SyncResult result, final boolean coalesced) {
      return new SyncAnswer(true, result.dbAddress(), result.receivedUpdate(),
          result.fallbackScanUsed(), result.extractedMediaCids(), coalesced ? Boolean.TRUE : null);
    }
  }

  private final SyncEngine engine;
  private final HttpResponses responses;

  /** Register it with {@link RelayRoutes#pinning}, which adds the token check. */
  public PinningSyncRoute(final SyncEngine engine, final HttpResponses responses) {
    this.engine = Objects.requireNonNull(engine, "engine");
    this.responses = Objects.requireNonNull(responses, "responses");
  }

  @Override
  public CompletableFuture<FullHttpResponse> handle(final RouteRequest request) {
    final JsonRequest.Parsed parsed = JsonRequest.parse(request, responses,
        "{\"dbAddress\":\"/orbitdb/…\"}");
    if (parsed.error() != null) {
      return CompletableFuture.completedFuture(parsed.error());
    }
    final Optional<String> address = parsed.request().text("dbAddress", "dbAddress", "address");
    if (address.isEmpty()) {
      return error(HttpResponseStatus.BAD_REQUEST, ErrorCodes.MISSING_DB_ADDRESS,
          "dbAddress is required (JSON body {\"dbAddress\":…} or query ?dbAddress=…)");
    }
    final Optional<OrbitDbAddress> valid = OrbitDbAddress.tryParse(address.get());
    if (valid.isEmpty()) {
      return CompletableFuture.completedFuture(responses.invalidAddress(address.get()));
    }
    final String dbAddress = valid.get().toString();
    return engine.requestSync(dbAddress).thenApply(outcome -> answer(dbAddress, outcome));
  }

  private FullHttpResponse answer(final String address, final SyncOutcome outcome) {
    if (outcome instanceof SyncOutcome.Completed completed) {
      return responses.json(HttpResponseStatus.OK,
          SyncAnswer.of(completed.result(), completed.coalesced()));
    }
    if (outcome instanceof SyncOutcome.TimedOut timedOut) {
      return responses.error(HttpResponseStatus.GATEWAY_TIMEOUT, ErrorCodes.SYNC_TIMEOUT,
          "sync of " + address + " did not finish within " + timedOut.timeoutMillis()
              + " ms; it keeps running, retry later");
    }
    final SyncOutcome.Failed failed = (SyncOutcome.Failed) outcome;
    if (failed.unavailableStore() != null) {
      // The relay retries it with back-off; the client may ask again later.
      return responses.error(HttpResponseStatus.SERVICE_UNAVAILABLE,
          ErrorCodes.STORE_UNAVAILABLE, failed.unavailableStore() + " store unavailable: sync of "
              + address + " failed and is retried: " + failed.message());
    }
    return responses.error(HttpResponseStatus.INTERNAL_SERVER_ERROR, ErrorCodes.SYNC_FAILED,
        "sync of " + address + " failed: " + failed.message());
  }

  private CompletableFuture<FullHttpResponse> error(final HttpResponseStatus status,
      final String code, final String message) {
    return CompletableFuture.completedFuture(responses.error(status, code, message));
  }
}
