package io.relaypinner.handoff.guest;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The multiaddrs a configured guest's relay is reachable on, predicted from the deployment facts
 * (notes/handoff.md 2.4, without the images' bugs): IPv4 through the mapped host ports, IPv6
 * routed without NAT on the relay's internal ports, and with a proxy hostname the secure WebSocket
 * addresses on port 443 of that name. Every address ends in {@code /p2p/<peerId>}.
 *
 * @param directTcp TCP addresses
 * @param proxyWss {@code /dns4|dns6/<proxy>/tcp/443/tls/ws} addresses
 * @param plainWs plain WebSocket addresses
 * @param quic {@code /udp/<port>/quic-v1} addresses: only when the deployment mapped a QUIC port
 *     ({@code quic_port}) and the relay listens on QUIC
 */
public record GuestAddresses(List<String> directTcp, List<String> proxyWss,
    List<String> plainWs, List<String> quic) {

  public GuestAddresses {
    directTcp = List.copyOf(directTcp);
    proxyWss = List.copyOf(proxyWss);
    plainWs = List.copyOf(plainWs);
    quic = List.copyOf(quic);
  }

  /** No configuration yet: nothing is reachable from outside. */
  public static final GuestAddresses NONE = new GuestAddresses(List.of(), List.of(), List.of(),
      List.of());

  /**
   * The addresses for a configuration.
   *
   * @param internalTcpPort the relay's {@code RELAY_TCP_PORT} (IPv6 is not port-mapped)
   * @param internalWsPort the relay's {@code RELAY_WS_PORT}
   * @param internalQuicPort the relay's {@code RELAY_QUIC_PORT}, or -1 when it has no QUIC
   *     listener ({@code RELAY_DISABLE_QUIC})
   */
  public static GuestAddresses predict(final ConfigureRequest config, final String peerId,
      final int internalTcpPort, final int internalWsPort, final int internalQuicPort) {
    final String p2p = "/p2p/" + peerId;
    final List<String> tcp = new ArrayList<>();
    final List<String> proxy = new ArrayList<>();
    final List<String> ws = new ArrayList<>();
    tcp.add("/ip4/" + config.publicIpv4() + "/tcp/" + config.tcpPort() + p2p);
    config.publicIpv6().ifPresent(v6 -> tcp.add("/ip6/" + v6 + "/tcp/" + internalTcpPort + p2p));
    config.proxyHostname().ifPresent(host -> {
      proxy.add("/dns4/" + host + "/tcp/443/tls/ws" + p2p);
      proxy.add("/dns6/" + host + "/tcp/443/tls/ws" + p2p);
    });
    ws.add("/ip4/" + config.publicIpv4() + "/tcp/" + config.wsPort() + "/ws" + p2p);
    config.publicIpv6().ifPresent(v6 ->
        ws.add("/ip6/" + v6 + "/tcp/" + internalWsPort + "/ws" + p2p));
    final List<String> quic = new ArrayList<>();
    if (internalQuicPort > 0 && config.quicPort().isPresent()) {
      quic.add("/ip4/" + config.publicIpv4() + "/udp/" + config.quicPort().getAsInt()
          + "/quic-v1" + p2p);
      config.publicIpv6().ifPresent(v6 ->
          quic.add("/ip6/" + v6 + "/udp/" + internalQuicPort + "/quic-v1" + p2p));
    }
    return new GuestAddresses(tcp, proxy, ws, quic);
  }

  /** Every address, secure browser-dialable ones first. */
  public List<String> all() {
    final Set<String> all = new LinkedHashSet<>(proxyWss);
    all.addAll(plainWs);
    all.addAll(directTcp);
    all.addAll(quic);
    return List.copyOf(all);
  }

  /** Addresses a browser can dial: proxy WSS, then plain WS (notes 2.5). */
  public List<String> browserBootstrap() {
    final Set<String> out = new LinkedHashSet<>(proxyWss);
    out.addAll(plainWs);
    return List.copyOf(out);
  }

  /** Addresses a probe dials: direct TCP and proxy WSS (notes 2.5). */
  public List<String> probe() {
    final Set<String> out = new LinkedHashSet<>(directTcp);
    out.addAll(proxyWss);
    return List.copyOf(out);
  }

  /** Spec 2.3's transports: {@code webrtc} (none yet), {@code tcp} and {@code websocket}. */
  public List<String> websocket() {
    final Set<String> out = new LinkedHashSet<>(proxyWss);
    out.addAll(plainWs);
    return List.copyOf(out);
  }
}
