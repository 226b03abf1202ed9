package io.relaypinner.libp2p.transport;

import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.MultiaddrComponent;
import io.relaypinner.multiformats.MultiaddrProtocol;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;

/** Conversions between IP multiaddrs ({@code /ip4|ip6/<addr>/tcp/<port>}) and socket addresses. */
public final class SocketAddresses {
  private SocketAddresses() {}

  /**
   * The socket address of a multiaddr that starts with {@code /ip4|ip6/<addr>/tcp/<port>}; any
   * components after those two (such as {@code /ws} or {@code /p2p/...}) are ignored.
   */
  public static Optional<InetSocketAddress> tcp(final Multiaddr address) {
    return socket(address, MultiaddrProtocol.TCP);
  }

  /**
   * The socket address of a multiaddr that starts with {@code /ip4|ip6/<addr>/udp/<port>} (such as
   * {@code .../quic-v1}); any components after those two are ignored.
   */
  public static Optional<InetSocketAddress> udp(final Multiaddr address) {
    return socket(address, MultiaddrProtocol.UDP);
  }

  private static Optional<InetSocketAddress> socket(final Multiaddr address,
      final MultiaddrProtocol transport) {
    final List<MultiaddrComponent> parts = address.components();
    if (parts.size() < 2 || parts.get(1).protocol() != transport) {
      return Optional.empty();
    }
    final MultiaddrComponent ip = parts.get(0);
    if (ip.protocol() != MultiaddrProtocol.IP4 && ip.protocol() != MultiaddrProtocol.IP6) {
      return Optional.empty();
    }
    try {
      final InetAddress inet = InetAddress.getByAddress(ip.value());
      return Optional.of(new InetSocketAddress(inet, parts.get(1).port()));
    } catch (final UnknownHostException e) {
      // getByAddress only fails on a wrong length, which MultiaddrComponent already rules out.
      throw new IllegalStateException("bad IP bytes in " + address, e);
    }
  }

  /** {@code /ip4|ip6/<addr>/tcp/<port>} for a socket address. */
  public static Multiaddr toMultiaddr(final InetSocketAddress address) {
    return toMultiaddr(address, MultiaddrProtocol.TCP);
  }

  /** {@code /ip4|ip6/<addr>/udp/<port>/quic-v1} for a socket address. */
  public static Multiaddr toQuicMultiaddr(final InetSocketAddress address) {
    return toMultiaddr(address, MultiaddrProtocol.UDP)
        .with(MultiaddrComponent.of(MultiaddrProtocol.QUIC_V1));
  }

  private static Multiaddr toMultiaddr(final InetSocketAddress address,
      final MultiaddrProtocol transport) {
    final InetAddress inet = address.getAddress();
    final MultiaddrProtocol ipProtocol =
        inet instanceof Inet4Address ? MultiaddrProtocol.IP4 : MultiaddrProtocol.IP6;
    return Multiaddr.of(List.of(
        MultiaddrComponent.of(ipProtocol, inet.getHostAddress().replaceFirst("%.*$", "")),
        MultiaddrComponent.of(transport, Integer.toString(address.getPort()))));
  }

  /**
   * The addresses a listener bound to {@code bound} is reachable on: itself, or for a wildcard
   * ({@code 0.0.0.0}, {@code ::}) every address of that family on interfaces that are up
   * (loopback included, IPv6 link-local excluded: it needs a zone to be dialable).
   */
  public static List<InetSocketAddress> expandWildcard(final InetSocketAddress bound) {
    final InetAddress inet = bound.getAddress();
    if (!inet.isAnyLocalAddress()) {
      return List.of(bound);
    }
    final boolean v4 = inet instanceof Inet4Address;
    final List<InetSocketAddress> out = new ArrayList<>();
    try {
      for (final NetworkInterface nic : Collections.list(NetworkInterface.getNetworkInterfaces())) {
        if (!nic.isUp()) {
          continue;
        }
        for (final InetAddress candidate : Collections.list(nic.getInetAddresses())) {
          final boolean family = v4 ? candidate instanceof Inet4Address
              : candidate instanceof Inet6Address && !candidate.isLinkLocalAddress();
          if (family) {
            out.add(new InetSocketAddress(candidate, bound.getPort()));
          }
        }
      }
    } catch (final SocketException e) {
      // Interfaces cannot be listed (unusual sandbox): loopback is still a true answer.
      out.add(new InetSocketAddress(
          v4 ? InetAddress.getLoopbackAddress() : loopback6(), bound.getPort()));
    }
    return out;
  }

  private static InetAddress loopback6() {
    try {
      return InetAddress.getByName("::1");
    } catch (final UnknownHostException e) {
      throw new IllegalStateException(e);
    }
  }
}
