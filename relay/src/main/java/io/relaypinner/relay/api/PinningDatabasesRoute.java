package io.relaypinner.relay.api;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.relay.http.ErrorCodes;
import io.relaypinner.relay.http.HttpResponses;
import io.relaypinner.relay.http.RouteHandler;
import io.relaypinner.relay.http.RouteRequest;
import io.relaypinner.relay.sync.SyncHistory;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * {@code GET /pinning/databases}, spec 2.5 and 4.4: the databases synced successfully at least
 * once, most recently synced first. With the query parameter {@code address} (or
 * {@code dbAddress}; percent-decoded, compared exactly) only that database, or 404
 * {@code database_not_found}; a value that is not a database address by the one rule of
 * {@link OrbitDbAddress#parse} (base58btc dag-cbor) is 400 {@code invalid_address}, as on every
 * route that takes an address. Answered from memory on the event loop.
 */
public final class PinningDatabasesRoute implements RouteHandler {
  /** One entry of spec 2.5. */
  @JsonPropertyOrder({"address", "lastSyncedAt"})
  public record Database(String address, String lastSyncedAt) {}

  /** The list response {@code {databases, total}}. */
  @JsonPropertyOrder({"databases", "total"})
  public record DatabaseList(List<Database> databases, int total) {}

  private final SyncHistory history;
  private final HttpResponses responses;

  public PinningDatabasesRoute(final SyncHistory history, final HttpResponses responses) {
    this.history = Objects.requireNonNull(history, "history");
    this.responses = Objects.requireNonNull(responses, "responses");
  }

  @Override
  public CompletableFuture<FullHttpResponse> handle(final RouteRequest request) {
    return CompletableFuture.completedFuture(answer(request));
  }

  private FullHttpResponse answer(final RouteRequest request) {
    final Optional<String> wanted = request.queryParameter("address")
        .or(() -> request.queryParameter("dbAddress"))
        .filter(value -> !value.isEmpty());
    if (wanted.isPresent()) {
      final Optional<OrbitDbAddress> address = OrbitDbAddress.tryParse(wanted.get());
      if (address.isEmpty()) {
        return responses.invalidAddress(wanted.get());
      }
      final Optional<SyncHistory.Entry> entry = history.get(address.get().toString());
      if (entry.isEmpty()) {
        return responses.error(HttpResponseStatus.NOT_FOUND, ErrorCodes.DATABASE_NOT_FOUND,
            "database " + wanted.get() + " is not in the sync history");
      }
      return responses.json(HttpResponseStatus.OK,
          new DatabaseList(List.of(database(entry.get())), 1));
    }
    final List<SyncHistory.Entry> all = history.all();
    final List<Database> databases = new ArrayList<>(all.size());
    for (final SyncHistory.Entry entry : all) {
      databases.add(database(entry));
    }
    return responses.json(HttpResponseStatus.OK, new DatabaseList(databases, databases.size()));
  }

  private static Database database(final SyncHistory.Entry entry) {
    return new Database(entry.address(), Timestamps.format(entry.lastSyncedAt()));
  }
}
