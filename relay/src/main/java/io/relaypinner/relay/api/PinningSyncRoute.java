package io.relaypinner.relay.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufInputStream;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.relay.http.BearerAuth;
import io.relaypinner.relay.http.ErrorCodes;
import io.relaypinner.relay.http.HttpResponses;
import io.relaypinner.relay.http.RouteHandler;
import io.relaypinner.relay.http.RouteRequest;
import io.relaypinner.relay.sync.SyncEngine;
import io.relaypinner.relay.sync.SyncOutcome;
import io.relaypinner.relay.sync.SyncResult;
import java.io.IOException;
import java.io.InputStream;
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
 * {@code unauthorized}, compared in constant time), body size (413 {@code payload_too_large}
 * above {@link #MAX_BODY}), JSON (400 {@code invalid_json}), address (the body's
 * {@code dbAddress} when it is a non-empty string after trimming, else the query's
 * {@code dbAddress} or {@code address}; none: 400 {@code missing_db_address}; not a database
 * address by the one rule of {@link OrbitDbAddress#parse}, base58btc dag-cbor: 400
 * {@code invalid_address}, never queued nor counted). Then 200 with the result, 500
 * {@code sync_failed}, or 504 {@code sync_timeout} while the sync keeps running.
 */
public final class PinningSyncRoute implements RouteHandler {
  /** Largest accepted body; an address is well under 200 bytes. */
  public static final int MAX_BODY = 16 * 1024;

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
  private final BearerAuth auth;
  private final HttpResponses responses;

  /**
   * @param apiToken {@code RELAY_API_TOKEN}: when present, requests need
   *     {@code Authorization: Bearer <token>}
   */
  public PinningSyncRoute(final SyncEngine engine, final Optional<String> apiToken,
      final HttpResponses responses) {
    this.engine = Objects.requireNonNull(engine, "engine");
    this.auth = BearerAuth.apiToken(apiToken);
    this.responses = Objects.requireNonNull(responses, "responses");
  }

  @Override
  public CompletableFuture<FullHttpResponse> handle(final RouteRequest request) {
    if (!auth.permits(request.headers().get(HttpHeaderNames.AUTHORIZATION))) {
      return CompletableFuture.completedFuture(BearerAuth.apiTokenRequired(responses));
    }
    final ByteBuf body = request.content();
    if (body.readableBytes() > MAX_BODY) {
      return error(HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE, ErrorCodes.PAYLOAD_TOO_LARGE,
          "request body above " + MAX_BODY + " bytes");
    }
    String address = null;
    if (!isBlank(body)) {
      final JsonNode json;
      try (InputStream in = new ByteBufInputStream(body.duplicate())) {
        json = responses.mapper().readTree(in);
      } catch (final JsonProcessingException e) {
        return error(HttpResponseStatus.BAD_REQUEST, ErrorCodes.INVALID_JSON,
            "request body is not valid JSON");
      } catch (final IOException e) {
        return error(HttpResponseStatus.BAD_REQUEST, ErrorCodes.INVALID_JSON,
            "request body cannot be read");
      }
      if (json == null || !json.isObject()) {
        return error(HttpResponseStatus.BAD_REQUEST, ErrorCodes.INVALID_JSON,
            "request body must be a JSON object such as {\"dbAddress\":\"/orbitdb/…\"}");
      }
      final JsonNode field = json.get("dbAddress");
      if (field != null && field.isTextual() && !field.textValue().trim().isEmpty()) {
        address = field.textValue().trim();
      }
    }
    if (address == null) {
      address = request.queryParameter("dbAddress").map(String::trim)
          .filter(value -> !value.isEmpty())
          .or(() -> request.queryParameter("address").map(String::trim)
              .filter(value -> !value.isEmpty()))
          .orElse(null);
    }
    if (address == null) {
      return error(HttpResponseStatus.BAD_REQUEST, ErrorCodes.MISSING_DB_ADDRESS,
          "dbAddress is required (JSON body {\"dbAddress\":…} or query ?dbAddress=…)");
    }
    final Optional<OrbitDbAddress> parsed = OrbitDbAddress.tryParse(address);
    if (parsed.isEmpty()) {
      return CompletableFuture.completedFuture(responses.invalidAddress(address));
    }
    final String dbAddress = parsed.get().toString();
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

  private static boolean isBlank(final ByteBuf body) {
    for (int i = body.readerIndex(); i < body.writerIndex(); i++) {
      final byte b = body.getByte(i);
      if (b != ' ' && b != '\t' && b != '\r' && b != '\n') {
        return false;
      }
    }
    return true;
  }
}
