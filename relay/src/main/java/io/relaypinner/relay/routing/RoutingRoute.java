package io.relaypinner.relay.routing;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.PeerId;
import io.relaypinner.relay.http.ErrorMapping;
import io.relaypinner.relay.http.HttpResponses;
import io.relaypinner.relay.http.RouteHandler;
import io.relaypinner.relay.http.RouteRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Delegated routing v1 (specs.ipfs.tech/routing/http-routing-v1), read-only and about this relay
 * only: {@code GET /routing/v1/providers/{cid}} answers with this relay (schema {@code peer}, its
 * addresses, protocol {@code transport-bitswap}) when it holds the block, 404 otherwise;
 * {@code GET /routing/v1/peers/{peer-id}} answers for itself and for connected peers. JSON by
 * default, NDJSON when {@code Accept: application/x-ndjson}. Public, like {@code /ipfs/}.
 */
public final class RoutingRoute implements RouteHandler {
  /** The route's prefix. */
  public static final String PREFIX = "/routing/v1/";
  static final String NDJSON = "application/x-ndjson";
  private static final String FOUND_CACHE =
      "public, max-age=300, stale-while-revalidate=172800, stale-if-error=172800";
  private static final String NOT_FOUND_CACHE = "public, max-age=60";

  /** One record of the {@code peer} schema. */
  @JsonPropertyOrder({"Schema", "ID", "Addrs", "Protocols"})
  public record PeerRecord(@JsonProperty("Schema") String schema, @JsonProperty("ID") String id,
      @JsonProperty("Addrs") List<String> addrs,
      @JsonProperty("Protocols") List<String> protocols) {}

  record Providers(@JsonProperty("Providers") List<PeerRecord> providers) {}

  record Peers(@JsonProperty("Peers") List<PeerRecord> peers) {}

  private final PeerId self;
  private final Supplier<List<Multiaddr>> selfAddresses;
  private final Predicate<Cid> holds;
  private final Function<PeerId, Optional<List<Multiaddr>>> connectedPeer;
  private final Executor storage;
  private final HttpResponses responses;

  /**
   * @param selfAddresses what this relay advertises (a trailing {@code /p2p/<self>} is dropped)
   * @param holds whether the blockstore holds a CID's block (blocking: run on {@code storage})
   * @param connectedPeer a connected peer's known addresses, empty when not connected
   */
  public RoutingRoute(final PeerId self, final Supplier<List<Multiaddr>> selfAddresses,
      final Predicate<Cid> holds, final Function<PeerId, Optional<List<Multiaddr>>> connectedPeer,
      final Executor storage, final HttpResponses responses) {
    this.self = Objects.requireNonNull(self, "self");
    this.selfAddresses = Objects.requireNonNull(selfAddresses, "selfAddresses");
    this.holds = Objects.requireNonNull(holds, "holds");
    this.connectedPeer = Objects.requireNonNull(connectedPeer, "connectedPeer");
    this.storage = Objects.requireNonNull(storage, "storage");
    this.responses = Objects.requireNonNull(responses, "responses");
  }

  @Override
  public CompletableFuture<FullHttpResponse> handle(final RouteRequest request) {
    final String rest = request.path().substring(PREFIX.length());
    final boolean ndjson = accepts(request.headers().get(HttpHeaderNames.ACCEPT));
    if (rest.startsWith("providers/")) {
      final String text = rest.substring("providers/".length());
      final Cid cid;
      try {
        cid = Cid.parse(text);
      } catch (final RuntimeException e) {
        return done(responses.error(HttpResponseStatus.BAD_REQUEST, "invalid_cid",
            "invalid CID: " + e.getMessage()));
      }
      try {
        return CompletableFuture.supplyAsync(() -> holds.test(cid), storage)
            .thenApply(held -> held
                ? found(ndjson, List.of(record(self, selfAddresses.get())), true)
                : notFound(cid + ": no provider known here"));
      } catch (final RejectedExecutionException e) {
        return done(responses.error(ErrorMapping.busy()));
      }
    }
    if (rest.startsWith("peers/")) {
      final PeerId peer;
      try {
        peer = PeerId.parse(rest.substring("peers/".length()));
      } catch (final RuntimeException e) {
        return done(responses.error(HttpResponseStatus.BAD_REQUEST, "invalid_peer_id",
            "invalid peer ID: " + e.getMessage()));
      }
      if (peer.equals(self)) {
        return done(found(ndjson, List.of(record(self, selfAddresses.get())), false));
      }
      return done(connectedPeer.apply(peer)
          .map(addresses -> found(ndjson, List.of(record(peer, addresses)), false))
          .orElseGet(() -> notFound(peer.toBase58() + " is not connected here")));
    }
    return done(HttpResponses.notFound());
  }

  private PeerRecord record(final PeerId peer, final List<Multiaddr> addresses) {
    final String suffix = "/p2p/" + peer.toBase58();
    final List<String> addrs = new ArrayList<>();
    for (final Multiaddr address : addresses) {
      String text = address.toString();
      if (text.endsWith(suffix)) {
        text = text.substring(0, text.length() - suffix.length());
      }
      if (!addrs.contains(text)) {
        addrs.add(text);
      }
    }
    return new PeerRecord("peer", peer.toBase58(), addrs, List.of("transport-bitswap"));
  }

  private FullHttpResponse found(final boolean ndjson, final List<PeerRecord> records,
      final boolean providers) {
    final FullHttpResponse response;
    if (ndjson) {
      final ByteBuf body = Unpooled.buffer();
      for (final PeerRecord record : records) {
        body.writeBytes(responses.jsonBytes(record)).writeByte('\n');
      }
      response = HttpResponses.body(HttpResponseStatus.OK, NDJSON, body);
    } else {
      response = responses.json(HttpResponseStatus.OK,
          providers ? new Providers(records) : new Peers(records));
    }
    response.headers().set(HttpHeaderNames.CACHE_CONTROL, FOUND_CACHE)
        .add(HttpHeaderNames.VARY, "Accept");
    return response;
  }

  private FullHttpResponse notFound(final String message) {
    final FullHttpResponse response =
        responses.error(HttpResponseStatus.NOT_FOUND, "not_found", message);
    response.headers().set(HttpHeaderNames.CACHE_CONTROL, NOT_FOUND_CACHE)
        .add(HttpHeaderNames.VARY, "Accept");
    return response;
  }

  static boolean accepts(final String accept) {
    return accept != null && accept.toLowerCase(Locale.ROOT).contains(NDJSON);
  }

  private static CompletableFuture<FullHttpResponse> done(final FullHttpResponse response) {
    return CompletableFuture.completedFuture(response);
  }
}
