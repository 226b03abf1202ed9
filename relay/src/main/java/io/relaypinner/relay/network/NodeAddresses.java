package io.relaypinner.relay.network;

import io.relaypinner.libp2p.transport.ws.ServerTlsSource;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.relay.api.AdvertisedAddresses;
import io.relaypinner.relay.autotls.AutoTlsService;
import io.relaypinner.relay.tls.CertificateStore.LoadedCertificate;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * What the relay advertises (spec 2.3) and what the AutoTLS broker may dial back, from the
 * host's listen addresses, the WebSocket certificate and the deployment: the policy of
 * {@link AdvertisedAddresses} applied to the running node. The advertised list is asked for by
 * every identify, reservation, discovery announcement and {@code /health}, so it is remembered
 * until its inputs change. Thread-safe.
 */
public final class NodeAddresses {
  private final AdvertisedAddresses advertiser;
  private final Supplier<List<Multiaddr>> listen;
  private final ServerTlsSource webSocketTls;
  private final Supplier<Optional<LoadedCertificate>> certificate;
  private final String zone;
  private final boolean deployedMode;
  private volatile Advertised cache;
  private volatile ZoneCheck zoneCheck;

  /** The advertised list and the inputs it was computed from (same inputs: same answer). */
  private record Advertised(List<Multiaddr> listen, boolean tls, boolean sni,
      List<Multiaddr> advertised) {}

  private record ZoneCheck(LoadedCertificate certificate, boolean covers) {}

  /**
   * @param advertiser the deployment's and {@code RELAY_ANNOUNCE}'s rules
   * @param listen the host's listen addresses now (the same list while they do not change)
   * @param webSocketTls the WebSocket port's certificate: {@code /tls/ws} forms while it has one
   * @param certificate the certificate of {@code RELAY_TLS_CERT_DIR}: the {@code /tls/sni} forms
   *     need one for {@code *.<zone>}
   * @param zone the AutoTLS serving zone of this peer
   * @param deployedMode whether the relay has a public address (dial-backs only to public ones)
   */
  public NodeAddresses(final AdvertisedAddresses advertiser,
      final Supplier<List<Multiaddr>> listen, final ServerTlsSource webSocketTls,
      final Supplier<Optional<LoadedCertificate>> certificate, final String zone,
      final boolean deployedMode) {
    this.advertiser = Objects.requireNonNull(advertiser, "advertiser");
    this.listen = Objects.requireNonNull(listen, "listen");
    this.webSocketTls = Objects.requireNonNull(webSocketTls, "webSocketTls");
    this.certificate = Objects.requireNonNull(certificate, "certificate");
    this.zone = Objects.requireNonNull(zone, "zone");
    this.deployedMode = deployedMode;
  }

  /** What the relay advertises now (spec 2.3): listen addresses and announced ones. */
  public List<Multiaddr> advertised() {
    final List<Multiaddr> addresses = listen.get();
    final boolean tls = webSocketTls.current().isPresent();
    // The /tls/sni forms need a certificate for *.<zone> (AutoTLS, or an operator's for it).
    final boolean sni = tls && certificate.get().map(this::coversZone).orElse(false);
    final Advertised cached = cache;
    if (cached != null && cached.listen() == addresses && cached.tls() == tls
        && cached.sni() == sni) {
      return cached.advertised();
    }
    final List<Multiaddr> computed = advertiser.compute(addresses, tls,
        sni ? Optional.of(zone) : Optional.empty());
    cache = new Advertised(addresses, tls, sni, computed);
    return computed;
  }

  /**
   * What the broker dials back: the advertised TCP and WebSocket addresses on IPs (no TLS forms,
   * no peer id); public ones only in deployed mode, every one when forced without a deployment.
   */
  public List<Multiaddr> dialBack() {
    final List<Multiaddr> out = new ArrayList<>();
    for (final Multiaddr address : advertised()) {
      final Multiaddr bare = address.withoutPeerId();
      final String text = bare.toString();
      final boolean ip = text.startsWith("/ip4/") || text.startsWith("/ip6/");
      final boolean plain = !text.contains("/tls") && (text.matches("/ip[46]/[^/]+/tcp/\\d+")
          || text.matches("/ip[46]/[^/]+/tcp/\\d+/ws"));
      if (ip && plain && (isDialable(bare) || !deployedMode) && !out.contains(bare)) {
        out.add(bare);
      }
    }
    return out;
  }

  /**
   * Public and not a documentation address (RFC 5737 192.0.2/24, 198.51.100/24, 203.0.113/24;
   * RFC 3849 2001:db8::/32): no broker can dial those, so they are never offered (and a relay
   * configured with one, as tests are, never contacts the ACME server).
   */
  public static boolean isDialable(final Multiaddr address) {
    if (!AdvertisedAddresses.isPublic(address)) {
      return false;
    }
    final String text = address.toString();
    return !(text.startsWith("/ip4/192.0.2.") || text.startsWith("/ip4/198.51.100.")
        || text.startsWith("/ip4/203.0.113.") || text.startsWith("/ip6/2001:db8:"));
  }

  /** Whether the certificate is for {@code *.<zone>}; remembered per loaded certificate. */
  private boolean coversZone(final LoadedCertificate loaded) {
    final ZoneCheck last = zoneCheck;
    if (last != null && last.certificate() == loaded) {
      return last.covers();
    }
    final boolean covers = AutoTlsService.covers(loaded.leaf(), zone);
    zoneCheck = new ZoneCheck(loaded, covers);
    return covers;
  }
}
