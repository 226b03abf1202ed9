package io.relaypinner.relay.api;

import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.relay.http.HttpResponses;
import io.relaypinner.relay.http.RouteHandler;
import io.relaypinner.relay.http.RouteRequest;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/** {@code GET /multiaddrs}, spec 2.3 and 4.2: the multiaddr record. */
public final class MultiaddrsRoute implements RouteHandler {
  /** The record of spec 2.3, fields in the spec's order. */
  public record MultiaddrRecord(String peerId, List<String> all, ByTransport byTransport,
      Best best, String autoTlsServingZone, MetricsHttpsStatus metricsHttps, String timestamp,
      boolean deployedMode, String version) {}

  /** Addresses per transport: the spec's three, then {@code quic} (QUIC v1, ours). */
  public record ByTransport(List<String> webrtc, List<String> tcp, List<String> websocket,
      List<String> quic) {}

  /** The first address of each transport, or null: the spec's three, then {@code quic}. */
  public record Best(String webrtc, String websocket, String tcp, String quic) {}

  private final String version;
  private final NodeStatus status;
  private final Supplier<List<Multiaddr>> advertised;
  private final Supplier<MetricsHttpsStatus> metricsHttps;
  private final boolean deployedMode;
  private final Clock clock;
  private final HttpResponses responses;

  /**
   * @param advertised the current advertised addresses ({@link AdvertisedAddresses#compute})
   */
  public MultiaddrsRoute(final String version, final NodeStatus status,
      final Supplier<List<Multiaddr>> advertised, final Supplier<MetricsHttpsStatus> metricsHttps,
      final boolean deployedMode, final Clock clock, final HttpResponses responses) {
    this.version = Objects.requireNonNull(version, "version");
    this.status = Objects.requireNonNull(status, "status");
    this.advertised = Objects.requireNonNull(advertised, "advertised");
    this.metricsHttps = Objects.requireNonNull(metricsHttps, "metricsHttps");
    this.deployedMode = deployedMode;
    this.clock = Objects.requireNonNull(clock, "clock");
    this.responses = Objects.requireNonNull(responses, "responses");
  }

  @Override
  public CompletableFuture<FullHttpResponse> handle(final RouteRequest request) {
    return CompletableFuture.completedFuture(HttpResponses.bytes(HttpResponseStatus.OK,
        HttpResponses.APPLICATION_JSON, responses.jsonBytes(record())));
  }

  /** The record as of now. */
  public MultiaddrRecord record() {
    final List<String> all = new ArrayList<>();
    final List<String> webrtc = new ArrayList<>();
    final List<String> tcp = new ArrayList<>();
    final List<String> websocket = new ArrayList<>();
    final List<String> quic = new ArrayList<>();
    for (final Multiaddr address : advertised.get()) {
      final String text = address.toString();
      all.add(text);
      switch (AdvertisedAddresses.transport(address)) {
        case "webrtc" -> webrtc.add(text);
        case "websocket" -> websocket.add(text);
        case "tcp" -> tcp.add(text);
        case "quic" -> quic.add(text);
        default -> {
          // circuit or unknown shapes are listed in `all` only
        }
      }
    }
    return new MultiaddrRecord(status.peerId(), all,
        new ByTransport(webrtc, tcp, websocket, quic),
        new Best(first(webrtc), first(websocket), first(tcp), first(quic)),
        status.autoTlsServingZone(),
        metricsHttps.get(), Timestamps.now(clock), deployedMode, version);
  }

  private static String first(final List<String> list) {
    return list.isEmpty() ? null : list.get(0);
  }
}
