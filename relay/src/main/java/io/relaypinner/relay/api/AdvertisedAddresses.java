package io.relaypinner.relay.api;

import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.MultiaddrComponent;
import io.relaypinner.multiformats.MultiaddrProtocol;
import io.relaypinner.multiformats.MultiformatException;
import io.relaypinner.multiformats.PeerId;
import io.relaypinner.relay.config.DeploymentConfig;
import io.relaypinner.relay.config.InvalidConfigException;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The addresses the relay advertises (spec 2.3 and 4.2, CONTRACT.md): what its listeners are
 * reachable on plus announced ones, each ending in {@code /p2p/<peerId>}, public before private.
 *
 * <p>In deployed mode ({@code PROXY_HOSTNAME}, {@code PUBLIC_IPV4} or an {@code EXTERNAL_*_PORT}
 * set) private and internal listen addresses are dropped, and the deployment's public addresses
 * are added: {@code /ip4/<PUBLIC_IPV4>/tcp/<EXTERNAL_RELAY_TCP_PORT, else the bound port>} and the
 * same for {@code PUBLIC_IPV6}; with a WebSocket listener also
 * {@code /ip4/<PUBLIC_IPV4>/tcp/<EXTERNAL_RELAY_WS_PORT, else the bound WS port>/ws} (and IPv6);
 * with a QUIC listener also
 * {@code /ip4/<PUBLIC_IPV4>/udp/<EXTERNAL_RELAY_QUIC_PORT, else the bound QUIC port>/quic-v1} (and
 * IPv6; no QUIC listener, no QUIC address, whatever {@code EXTERNAL_RELAY_QUIC_PORT} says).
 * {@code RELAY_ANNOUNCE} entries are added in both modes.
 *
 * <p><b>TLS.</b> While a certificate is available the WebSocket port also speaks TLS (detected per
 * connection), so every advertised {@code .../ws} address gets a {@code .../tls/ws} twin listed
 * before it. With {@code PROXY_HOSTNAME} (a TLS-terminating proxy in front of the relay, so TLS
 * whether or not the relay has a certificate) the first deployed address is
 * {@code /dns4/<PROXY_HOSTNAME>/tcp/<EXTERNAL_RELAY_WS_PORT, else the bound WS port>/tls/ws}:
 * {@code /dns4} because the deployment's public address is IPv4 and a {@code /dns} address would
 * let dialers try AAAA records the proxy may not serve; it is {@code /dns} only when
 * {@code PUBLIC_IPV6} is set and {@code PUBLIC_IPV4} is not.
 */
public final class AdvertisedAddresses {
  private final PeerId peerId;
  private final DeploymentConfig deployment;
  private final List<Multiaddr> announce;

  /**
   * @throws InvalidConfigException when an {@code RELAY_ANNOUNCE} entry is not a multiaddr
   */
  public AdvertisedAddresses(final PeerId peerId, final DeploymentConfig deployment,
      final List<String> announce) {
    this.peerId = peerId;
    this.deployment = deployment;
    final List<Multiaddr> parsed = new ArrayList<>();
    for (final String text : announce) {
      try {
        parsed.add(Multiaddr.parse(text));
      } catch (final MultiformatException e) {
        throw new InvalidConfigException("RELAY_ANNOUNCE", "RELAY_ANNOUNCE: \"" + text
            + "\" is not a multiaddr (" + e.getMessage() + ")");
      }
    }
    this.announce = List.copyOf(parsed);
  }

  /**
   * The advertised list for these listen addresses ({@code /ip4|ip6/<addr>/tcp/<port>} and
   * {@code .../ws}, wildcards already expanded), without TLS.
   */
  public List<Multiaddr> compute(final List<Multiaddr> listenAddresses) {
    return compute(listenAddresses, false);
  }

  /**
   * The advertised list for these listen addresses; {@code tlsAvailable} says whether the
   * WebSocket port has a certificate now (then {@code /tls/ws} addresses are listed too).
   */
  public List<Multiaddr> compute(final List<Multiaddr> listenAddresses,
      final boolean tlsAvailable) {
    return compute(listenAddresses, tlsAvailable, Optional.empty());
  }

  /**
   * The advertised list; with {@code sniZone} (the certificate covers {@code *.<zone>}, e.g. from
   * AutoTLS) every IP WebSocket address also gets the form js-libp2p and Kubo dial for AutoTLS,
   * {@code /ip4/<ip>/tcp/<port>/tls/sni/<ip-label>.<zone>/ws}, listed first.
   */
  public List<Multiaddr> compute(final List<Multiaddr> listenAddresses,
      final boolean tlsAvailable, final Optional<String> sniZone) {
    final List<Multiaddr> base = computeBase(listenAddresses, tlsAvailable);
    if (!tlsAvailable || sniZone.isEmpty()) {
      return base;
    }
    final List<Multiaddr> sni = new ArrayList<>();
    for (final Multiaddr address : base) {
      sniForm(address, sniZone.get()).ifPresent(sni::add);
    }
    if (sni.isEmpty()) {
      return base;
    }
    final Set<Multiaddr> out = new LinkedHashSet<>();
    for (final Multiaddr address : sni) {
      if (isPublic(address)) {
        out.add(address);
      }
    }
    for (final Multiaddr address : base) {
      if (isPublic(address)) {
        out.add(address);
      }
    }
    out.addAll(sni);
    out.addAll(base);
    return List.copyOf(out);
  }

  /** {@code /ip4|ip6/<ip>/tcp/<port>/ws} to its {@code /tls/sni/<label>.<zone>/ws} form. */
  static Optional<Multiaddr> sniForm(final Multiaddr address, final String zone) {
    final List<MultiaddrComponent> parts = address.withoutPeerId().components();
    if (!isPlainWebSocket(parts) || parts.get(1).protocol() != MultiaddrProtocol.TCP
        || (parts.get(0).protocol() != MultiaddrProtocol.IP4
            && parts.get(0).protocol() != MultiaddrProtocol.IP6)) {
      return Optional.empty();
    }
    final String label = ipLabel(parts.get(0));
    return Optional.of(Multiaddr.parse("/" + parts.get(0).protocol().protocolName() + "/"
        + parts.get(0).valueText() + "/tcp/" + parts.get(1).port() + "/tls/sni/" + label + "."
        + zone + "/ws").withPeerId(address.peerId().orElseThrow()));
  }

  /**
   * The DNS label of an IP under libp2p.direct: IPv4 dots become dashes; IPv6 (compressed form)
   * colons become dashes, with a zero where the address starts or ends in {@code ::}
   * ({@code 2001:db8::1} is {@code 2001-db8--1}, {@code 2001:db8::} is {@code 2001-db8--0}).
   */
  static String ipLabel(final MultiaddrComponent ip) {
    String text = ip.valueText().toLowerCase(java.util.Locale.ROOT);
    if (ip.protocol() == MultiaddrProtocol.IP4) {
      return text.replace('.', '-');
    }
    if (text.startsWith(":")) {
      text = "0" + text;
    }
    if (text.endsWith(":")) {
      text = text + "0";
    }
    return text.replace(':', '-');
  }

  private List<Multiaddr> computeBase(final List<Multiaddr> listenAddresses,
      final boolean tlsAvailable) {
    final boolean deployed = deployment.deployedMode();
    final Set<Multiaddr> out = new LinkedHashSet<>();
    for (final Multiaddr address : listenAddresses) {
      if (!deployed || isPublic(address)) {
        addWebSocketAware(out, address, tlsAvailable);
      }
    }
    if (deployed) {
      final int tcpPort = deployment.externalTcpPort().orElse(boundPort(listenAddresses, false));
      final int wsPort = deployment.externalWsPort().orElse(boundPort(listenAddresses, true));
      final int boundQuic = boundQuicPort(listenAddresses);
      final int quicPort = boundQuic > 0 ? deployment.externalQuicPort().orElse(boundQuic) : -1;
      deployment.proxyHostname().ifPresent(host -> {
        if (wsPort > 0) {
          final String dns = deployment.publicIpv6().isPresent()
              && deployment.publicIpv4().isEmpty() ? "/dns/" : "/dns4/";
          out.add(withPeer(Multiaddr.parse(dns + host + "/tcp/" + wsPort + "/tls/ws")));
        }
      });
      for (final String ip : publicIps()) {
        if (tcpPort > 0) {
          out.add(withPeer(Multiaddr.parse(ip + "/tcp/" + tcpPort)));
        }
        if (wsPort > 0) {
          addWebSocketAware(out, Multiaddr.parse(ip + "/tcp/" + wsPort + "/ws"), tlsAvailable);
        }
        if (quicPort > 0) {
          out.add(withPeer(Multiaddr.parse(ip + "/udp/" + quicPort + "/quic-v1")));
        }
      }
    }
    for (final Multiaddr address : announce) {
      out.add(withPeer(address));
    }
    final List<Multiaddr> publicFirst = new ArrayList<>(out.size());
    final List<Multiaddr> rest = new ArrayList<>();
    for (final Multiaddr address : out) {
      (isPublic(address) ? publicFirst : rest).add(address);
    }
    publicFirst.addAll(rest);
    return List.copyOf(publicFirst);
  }

  /** {@code /ip4/<PUBLIC_IPV4>} and {@code /ip6/<PUBLIC_IPV6>}, those that are set. */
  private List<String> publicIps() {
    final List<String> ips = new ArrayList<>(2);
    deployment.publicIpv4().ifPresent(ip -> ips.add("/ip4/" + ip));
    deployment.publicIpv6().ifPresent(ip -> ips.add("/ip6/" + ip));
    return ips;
  }

  /** The port of the first TCP (or WebSocket) listen address, or -1 if there is none. */
  private static int boundPort(final List<Multiaddr> listenAddresses, final boolean webSocket) {
    for (final Multiaddr address : listenAddresses) {
      final List<MultiaddrComponent> parts = address.withoutPeerId().components();
      if (parts.size() >= 2 && parts.get(1).protocol() == MultiaddrProtocol.TCP
          && isPlainWebSocket(parts) == webSocket && (webSocket || parts.size() == 2)) {
        return parts.get(1).port();
      }
    }
    return -1;
  }

  /** The port of the first QUIC v1 listen address ({@code /udp/<port>/quic-v1}), or -1. */
  private static int boundQuicPort(final List<Multiaddr> listenAddresses) {
    for (final Multiaddr address : listenAddresses) {
      final List<MultiaddrComponent> parts = address.withoutPeerId().components();
      if (isQuic(parts)) {
        return parts.get(1).port();
      }
    }
    return -1;
  }

  /** {@code /ip4|ip6/<ip>/udp/<port>/quic-v1}, nothing after it (no WebTransport). */
  private static boolean isQuic(final List<MultiaddrComponent> parts) {
    return parts.size() == 3 && parts.get(1).protocol() == MultiaddrProtocol.UDP
        && parts.get(2).protocol() == MultiaddrProtocol.QUIC_V1;
  }

  private static boolean isPlainWebSocket(final List<MultiaddrComponent> parts) {
    return parts.size() == 3 && parts.get(2).protocol() == MultiaddrProtocol.WS;
  }

  /** Adds {@code address}, preceded by its {@code /tls/ws} twin for a WebSocket one with TLS. */
  private void addWebSocketAware(final Set<Multiaddr> out, final Multiaddr address,
      final boolean tlsAvailable) {
    final List<MultiaddrComponent> parts = address.withoutPeerId().components();
    if (tlsAvailable && isPlainWebSocket(parts)) {
      out.add(withPeer(Multiaddr.of(List.of(parts.get(0), parts.get(1),
          MultiaddrComponent.of(MultiaddrProtocol.TLS),
          MultiaddrComponent.of(MultiaddrProtocol.WS)))));
    }
    out.add(withPeer(address));
  }

  private Multiaddr withPeer(final Multiaddr address) {
    return address.peerId().isPresent() ? address : address.withPeerId(peerId);
  }

  /**
   * The transport an address belongs to in {@code byTransport}: webrtc, websocket, tcp or quic
   * ({@code /quic-v1} without WebTransport: those are {@code webtransport}, not listed yet).
   */
  public static String transport(final Multiaddr address) {
    boolean tcp = false;
    boolean quic = false;
    for (final MultiaddrComponent component : address.components()) {
      switch (component.protocol()) {
        case WEBRTC, WEBRTC_DIRECT -> {
          return "webrtc";
        }
        case WS, WSS -> {
          return "websocket";
        }
        case WEBTRANSPORT -> {
          return "webtransport";
        }
        case QUIC_V1 -> quic = true;
        case TCP -> tcp = true;
        default -> {
          // other components do not decide the transport
        }
      }
    }
    return tcp ? "tcp" : quic ? "quic" : "other";
  }

  /**
   * Whether an address is reachable from the internet: DNS names are; IP addresses are unless
   * loopback, private (RFC 1918, unique local fc00::/7), link-local, shared (100.64/10) or
   * unspecified.
   */
  public static boolean isPublic(final Multiaddr address) {
    if (address.components().isEmpty()) {
      return false;
    }
    final MultiaddrComponent first = address.components().get(0);
    if (first.protocol() != MultiaddrProtocol.IP4 && first.protocol() != MultiaddrProtocol.IP6) {
      return true;
    }
    final InetAddress ip;
    try {
      ip = InetAddress.getByAddress(first.value());
    } catch (final UnknownHostException e) {
      return false;
    }
    if (ip.isLoopbackAddress() || ip.isSiteLocalAddress() || ip.isLinkLocalAddress()
        || ip.isAnyLocalAddress() || ip.isMulticastAddress()) {
      return false;
    }
    final byte[] b = ip.getAddress();
    if (ip instanceof Inet4Address) {
      // 100.64.0.0/10 (carrier-grade NAT) is not reachable from outside either.
      return !((b[0] & 0xff) == 100 && (b[1] & 0xc0) == 0x40);
    }
    return !(ip instanceof Inet6Address) || (b[0] & 0xfe) != 0xfc;
  }
}
