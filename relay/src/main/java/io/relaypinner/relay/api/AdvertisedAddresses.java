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
import java.util.Set;

/**
 * The addresses the relay advertises (spec 2.3 and 4.2, CONTRACT.md): what its listeners are
 * reachable on plus announced ones, each ending in {@code /p2p/<peerId>}, public before private.
 *
 * <p>In deployed mode ({@code PROXY_HOSTNAME}, {@code PUBLIC_IPV4} or an {@code EXTERNAL_*_PORT}
 * set) private and internal listen addresses are dropped, and the deployment's public addresses
 * are added: {@code /ip4/<PUBLIC_IPV4>/tcp/<EXTERNAL_RELAY_TCP_PORT, else the bound port>} and the
 * same for {@code PUBLIC_IPV6}. {@code RELAY_ANNOUNCE} entries are added in both modes.
 * (WebSocket and proxy addresses join when the WebSocket transport does.)
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
   * The advertised list for these listen addresses ({@code /ip4|ip6/<addr>/tcp/<port>}, wildcards
   * already expanded).
   */
  public List<Multiaddr> compute(final List<Multiaddr> listenAddresses) {
    final boolean deployed = deployment.deployedMode();
    final Set<Multiaddr> out = new LinkedHashSet<>();
    for (final Multiaddr address : listenAddresses) {
      if (!deployed || isPublic(address)) {
        out.add(withPeer(address));
      }
    }
    if (deployed) {
      final int boundTcp = listenAddresses.stream()
          .filter(a -> a.components().size() >= 2
              && a.components().get(1).protocol() == MultiaddrProtocol.TCP)
          .mapToInt(a -> a.components().get(1).port()).findFirst().orElse(-1);
      final int tcpPort = deployment.externalTcpPort().orElse(boundTcp);
      if (tcpPort > 0) {
        deployment.publicIpv4().ifPresent(ip -> out.add(withPeer(
            Multiaddr.parse("/ip4/" + ip + "/tcp/" + tcpPort))));
        deployment.publicIpv6().ifPresent(ip -> out.add(withPeer(
            Multiaddr.parse("/ip6/" + ip + "/tcp/" + tcpPort))));
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

  private Multiaddr withPeer(final Multiaddr address) {
    return address.peerId().isPresent() ? address : address.withPeerId(peerId);
  }

  /** The transport an address belongs to in {@code byTransport}: webrtc, websocket or tcp. */
  public static String transport(final Multiaddr address) {
    boolean tcp = false;
    for (final MultiaddrComponent component : address.components()) {
      switch (component.protocol()) {
        case WEBRTC, WEBRTC_DIRECT -> {
          return "webrtc";
        }
        case WS, WSS -> {
          return "websocket";
        }
        case TCP -> tcp = true;
        default -> {
          // other components do not decide the transport
        }
      }
    }
    return tcp ? "tcp" : "other";
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
