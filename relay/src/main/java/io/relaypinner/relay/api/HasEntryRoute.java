package io.relaypinner.relay.api;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.relay.http.ErrorCodes;
import io.relaypinner.relay.http.ErrorMapping;
import io.relaypinner.relay.http.HttpResponses;
import io.relaypinner.relay.http.RouteHandler;
import io.relaypinner.relay.http.RouteRequest;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * {@code POST /pinning/has-entry} as orbitdb-relay 0.10 answers it (CONTRACT.md, milestone 3): is
 * one entry in the relay's own log of one database? A client that wrote several entries proves
 * each of them was replicated, which {@code /pinning/sync}'s answer cannot.
 *
 * <p>Request: the {@link JsonRequest} rules of {@code /pinning/sync} (token, body bound, JSON),
 * {@code dbAddress} from the body or the query's {@code dbAddress} / {@code address}, then
 * {@code entryHash} from the body or the query's {@code entryHash} / {@code hash}. Missing: 400
 * {@code missing_db_address} / {@code missing_entry_hash}; an address that is not a database
 * address: 400 {@code invalid_address}; a hash that is not a CID: 400 {@code invalid_entry_hash}
 * (ours: the JavaScript relay answers {@code false} for any string).
 *
 * <p>Answer: {@code {ok, dbAddress, entryHash, hasEntry, entryCount, source}}; {@code hasEntry}
 * is true only for an entry verified into the log, false for one the followed database's log
 * does not hold, null with a {@code source} when the relay cannot tell (it does not follow the
 * database). The lookup runs on {@code storage} (one datastore key); a full queue: 503.
 */
public final class HasEntryRoute implements RouteHandler {
  /** The answer; {@code dbAddress} normalised, {@code entryHash} as sent (trimmed). */
  @JsonPropertyOrder({"ok", "dbAddress", "entryHash", "hasEntry", "entryCount", "source"})
  public record HasEntryAnswer(boolean ok, String dbAddress, String entryHash, Boolean hasEntry,
      Long entryCount, String source) {}

  private final EntryLookup lookup;
  private final Executor storage;
  private final HttpResponses responses;

  /**
   * Register it with {@link RelayRoutes#hasEntry}, which adds the token check.
   *
   * @param storage runs the lookup (it may read the datastore)
   */
  public HasEntryRoute(final EntryLookup lookup, final Executor storage,
      final HttpResponses responses) {
    this.lookup = Objects.requireNonNull(lookup, "lookup");
    this.storage = Objects.requireNonNull(storage, "storage");
    this.responses = Objects.requireNonNull(responses, "responses");
  }

  @Override
  public CompletableFuture<FullHttpResponse> handle(final RouteRequest request) {
    final JsonRequest.Parsed parsed = JsonRequest.parse(request, responses,
        "{\"dbAddress\":\"/orbitdb/…\",\"entryHash\":\"zdpu…\"}");
    if (parsed.error() != null) {
      return done(parsed.error());
    }
    final Optional<String> address = parsed.request().text("dbAddress", "dbAddress", "address");
    if (address.isEmpty()) {
      return done(responses.error(HttpResponseStatus.BAD_REQUEST, ErrorCodes.MISSING_DB_ADDRESS,
          "dbAddress is required (JSON body {\"dbAddress\":…} or query ?dbAddress=…)"));
    }
    final Optional<String> hash = parsed.request().text("entryHash", "entryHash", "hash");
    if (hash.isEmpty()) {
      return done(responses.error(HttpResponseStatus.BAD_REQUEST, ErrorCodes.MISSING_ENTRY_HASH,
          "entryHash is required (JSON body {\"entryHash\":…} or query ?entryHash=…)"));
    }
    final Optional<OrbitDbAddress> database = OrbitDbAddress.tryParse(address.get());
    if (database.isEmpty()) {
      return done(responses.invalidAddress(address.get()));
    }
    final Cid entry;
    try {
      entry = Cid.parse(hash.get());
    } catch (final RuntimeException e) {
      final String shown = hash.get().length() <= 120 ? hash.get()
          : hash.get().substring(0, 120) + "…";
      return done(responses.error(HttpResponseStatus.BAD_REQUEST, ErrorCodes.INVALID_ENTRY_HASH,
          "not an entry hash (a CID, zdpu…): " + shown));
    }
    final String dbAddress = database.get().toString();
    final String entryHash = hash.get();
    try {
      return CompletableFuture.supplyAsync(() -> lookup.lookup(database.get(), entry), storage)
          .thenApply(result -> responses.json(HttpResponseStatus.OK, new HasEntryAnswer(true,
              dbAddress, entryHash, result.hasEntry(), result.entryCount(), result.source())));
    } catch (final RejectedExecutionException e) {
      return done(responses.error(ErrorMapping.busy()));
    }
  }

  private static CompletableFuture<FullHttpResponse> done(final FullHttpResponse response) {
    return CompletableFuture.completedFuture(response);
  }
}
