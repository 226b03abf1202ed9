package io.relaypinner.relay.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.PeerId;
import io.relaypinner.relay.config.DeploymentConfig;
import io.relaypinner.relay.config.InvalidConfigException;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

class AdvertisedAddressesTest {
  private static final PeerId PEER = PeerId.parse(
      "12D3KooWDpJ7As7BWAwRMfu1VU2WCqNjvq387JEYKDBj4kx6nXTN");
  private static final String P2P = "/p2p/" + PEER;
  private static final List<Multiaddr> LISTEN = List.of(
      Multiaddr.parse("/ip4/127.0.0.1/tcp/9091"), Multiaddr.parse("/ip4/10.0.0.5/tcp/9091"),
      Multiaddr.parse("/ip4/203.0.113.9/tcp/9091"), Multiaddr.parse("/ip6/::1/tcp/9091"));

  private static DeploymentConfig development() {
    return new DeploymentConfig(Optional.empty(), Optional.empty(), Optional.empty(),
        OptionalInt.empty(), OptionalInt.empty(), OptionalInt.empty(), OptionalInt.empty(),
        OptionalInt.empty(), OptionalInt.empty());
  }

  private static DeploymentConfig deployed(final String ipv4, final OptionalInt externalTcp) {
    return new DeploymentConfig(Optional.of(ipv4), Optional.of("2001:db8::7"), Optional.empty(),
        externalTcp, OptionalInt.empty(), OptionalInt.empty(), OptionalInt.empty(),
        OptionalInt.empty(), OptionalInt.empty());
  }

  private static List<String> texts(final List<Multiaddr> addresses) {
    return addresses.stream().map(Multiaddr::toString).toList();
  }

  @Test
  void compute_shouldKeepEveryAddressPublicFirst_withPeerId_inDevelopmentMode() {
    final AdvertisedAddresses advertised = new AdvertisedAddresses(PEER, development(),
        List.of("/dns4/relay.example.org/tcp/443/wss"));
    assertThat(texts(advertised.compute(LISTEN))).containsExactly(
        "/ip4/203.0.113.9/tcp/9091" + P2P,
        "/dns4/relay.example.org/tcp/443/wss" + P2P,
        "/ip4/127.0.0.1/tcp/9091" + P2P,
        "/ip4/10.0.0.5/tcp/9091" + P2P,
        "/ip6/::1/tcp/9091" + P2P);
  }

  @Test
  void compute_shouldDropPrivateAddresses_andAnnounceTheDeployment_inDeployedMode() {
    final AdvertisedAddresses advertised = new AdvertisedAddresses(PEER,
        deployed("198.51.100.4", OptionalInt.of(40001)), List.of());
    assertThat(texts(advertised.compute(LISTEN))).containsExactly(
        "/ip4/203.0.113.9/tcp/9091" + P2P,
        "/ip4/198.51.100.4/tcp/40001" + P2P,
        "/ip6/2001:db8::7/tcp/40001" + P2P);
  }

  @Test
  void compute_shouldUseTheBoundPort_whenNoExternalPortIsSet_andNotRepeatAddresses() {
    final AdvertisedAddresses advertised = new AdvertisedAddresses(PEER,
        deployed("203.0.113.9", OptionalInt.empty()), List.of("/ip4/203.0.113.9/tcp/9091" + P2P));
    assertThat(texts(advertised.compute(LISTEN))).containsExactly(
        "/ip4/203.0.113.9/tcp/9091" + P2P,
        "/ip6/2001:db8::7/tcp/9091" + P2P);
  }

  private static final List<Multiaddr> LISTEN_WITH_WS = List.of(
      Multiaddr.parse("/ip4/127.0.0.1/tcp/9091"), Multiaddr.parse("/ip4/127.0.0.1/tcp/9092/ws"),
      Multiaddr.parse("/ip4/10.0.0.5/tcp/9091"), Multiaddr.parse("/ip4/10.0.0.5/tcp/9092/ws"));

  @Test
  void compute_shouldListTlsWebSocketTwins_whenTlsIsAvailable() {
    final AdvertisedAddresses advertised = new AdvertisedAddresses(PEER, development(),
        List.of());
    assertThat(texts(advertised.compute(LISTEN_WITH_WS, false))).containsExactly(
        "/ip4/127.0.0.1/tcp/9091" + P2P, "/ip4/127.0.0.1/tcp/9092/ws" + P2P,
        "/ip4/10.0.0.5/tcp/9091" + P2P, "/ip4/10.0.0.5/tcp/9092/ws" + P2P);
    assertThat(texts(advertised.compute(LISTEN_WITH_WS, true))).containsExactly(
        "/ip4/127.0.0.1/tcp/9091" + P2P, "/ip4/127.0.0.1/tcp/9092/tls/ws" + P2P,
        "/ip4/127.0.0.1/tcp/9092/ws" + P2P, "/ip4/10.0.0.5/tcp/9091" + P2P,
        "/ip4/10.0.0.5/tcp/9092/tls/ws" + P2P, "/ip4/10.0.0.5/tcp/9092/ws" + P2P);
  }

  @Test
  void compute_shouldAnnounceTheProxyAndPublicWebSocketAddresses_inDeployedMode() {
    final DeploymentConfig deployment = new DeploymentConfig(Optional.of("198.51.100.4"),
        Optional.empty(), Optional.of("relay.example.org"), OptionalInt.empty(),
        OptionalInt.of(443), OptionalInt.empty(), OptionalInt.empty(), OptionalInt.empty(),
        OptionalInt.empty());
    final AdvertisedAddresses advertised = new AdvertisedAddresses(PEER, deployment, List.of());
    assertThat(texts(advertised.compute(LISTEN_WITH_WS, false))).containsExactly(
        "/dns4/relay.example.org/tcp/443/tls/ws" + P2P,
        "/ip4/198.51.100.4/tcp/9091" + P2P,
        "/ip4/198.51.100.4/tcp/443/ws" + P2P);
    assertThat(texts(advertised.compute(LISTEN_WITH_WS, true))).containsExactly(
        "/dns4/relay.example.org/tcp/443/tls/ws" + P2P,
        "/ip4/198.51.100.4/tcp/9091" + P2P,
        "/ip4/198.51.100.4/tcp/443/tls/ws" + P2P,
        "/ip4/198.51.100.4/tcp/443/ws" + P2P);
    assertThat(AdvertisedAddresses.transport(Multiaddr.parse(
        "/dns4/relay.example.org/tcp/443/tls/ws"))).isEqualTo("websocket");
  }

  @Test
  void compute_shouldUseTheBoundWebSocketPortAndDns_forAProxyWithOnlyIpv6Known() {
    final DeploymentConfig deployment = new DeploymentConfig(Optional.empty(),
        Optional.of("2001:db8::7"), Optional.of("relay.example.org"), OptionalInt.empty(),
        OptionalInt.empty(), OptionalInt.empty(), OptionalInt.empty(), OptionalInt.empty(),
        OptionalInt.empty());
    final AdvertisedAddresses advertised = new AdvertisedAddresses(PEER, deployment, List.of());
    assertThat(texts(advertised.compute(LISTEN_WITH_WS, false))).containsExactly(
        "/dns/relay.example.org/tcp/9092/tls/ws" + P2P,
        "/ip6/2001:db8::7/tcp/9091" + P2P,
        "/ip6/2001:db8::7/tcp/9092/ws" + P2P);
  }

  @Test
  void constructor_shouldNameRelayAnnounce_whenAnEntryIsNotAMultiaddr() {
    assertThatThrownBy(() -> new AdvertisedAddresses(PEER, development(),
        List.of("/ip4/999.1.1.1/tcp/1")))
        .isInstanceOf(InvalidConfigException.class).hasMessageStartingWith("RELAY_ANNOUNCE: ");
  }

  @Test
  void isPublic_shouldRejectInternalRanges() {
    for (final String internal : List.of("/ip4/127.0.0.1/tcp/1", "/ip4/10.1.2.3/tcp/1",
        "/ip4/172.16.0.1/tcp/1", "/ip4/192.168.1.1/tcp/1", "/ip4/100.64.0.1/tcp/1",
        "/ip4/169.254.1.1/tcp/1", "/ip4/0.0.0.0/tcp/1", "/ip6/::1/tcp/1", "/ip6/fd00::1/tcp/1",
        "/ip6/fe80::1/tcp/1", "/ip6/::/tcp/1")) {
      assertThat(AdvertisedAddresses.isPublic(Multiaddr.parse(internal))).as(internal).isFalse();
    }
    for (final String external : List.of("/ip4/8.8.8.8/tcp/1", "/ip4/100.128.0.1/tcp/1",
        "/ip6/2606:4700::1111/tcp/1", "/dns4/relay.example.org/tcp/443/wss")) {
      assertThat(AdvertisedAddresses.isPublic(Multiaddr.parse(external))).as(external).isTrue();
    }
  }

  @Test
  void transport_shouldClassifyWebrtcWebsocketAndTcp() {
    assertThat(AdvertisedAddresses.transport(Multiaddr.parse("/ip4/1.2.3.4/tcp/1"))).isEqualTo(
        "tcp");
    assertThat(AdvertisedAddresses.transport(Multiaddr.parse("/ip4/1.2.3.4/tcp/1/ws")))
        .isEqualTo("websocket");
    assertThat(AdvertisedAddresses.transport(Multiaddr.parse("/dns4/a.b/tcp/443/tls/ws")))
        .isEqualTo("websocket");
    assertThat(AdvertisedAddresses.transport(Multiaddr.parse("/ip4/1.2.3.4/udp/1/webrtc-direct")))
        .isEqualTo("webrtc");
    assertThat(AdvertisedAddresses.transport(Multiaddr.parse("/ip4/1.2.3.4/udp/1/quic-v1")))
        .isEqualTo("quic");
    assertThat(AdvertisedAddresses.transport(Multiaddr.parse("/ip6/::1/udp/1/quic-v1" + P2P)))
        .isEqualTo("quic");
    assertThat(AdvertisedAddresses.transport(Multiaddr.parse(
        "/ip4/1.2.3.4/udp/1/quic-v1/webtransport"))).isEqualTo("webtransport");
  }

  @Test
  void compute_shouldKeepQuicListenAddresses_inDevelopmentMode() {
    final AdvertisedAddresses advertised = new AdvertisedAddresses(PEER, development(),
        List.of());
    assertThat(texts(advertised.compute(List.of(Multiaddr.parse("/ip4/127.0.0.1/tcp/9091"),
        Multiaddr.parse("/ip4/127.0.0.1/udp/9094/quic-v1"),
        Multiaddr.parse("/ip4/203.0.113.9/udp/9094/quic-v1"))))).containsExactly(
        "/ip4/203.0.113.9/udp/9094/quic-v1" + P2P,
        "/ip4/127.0.0.1/tcp/9091" + P2P,
        "/ip4/127.0.0.1/udp/9094/quic-v1" + P2P);
  }

  @Test
  void compute_shouldAnnounceQuicOnThePublicIps_withTheExternalPort_inDeployedMode() {
    final DeploymentConfig deployment = new DeploymentConfig(Optional.of("198.51.100.4"),
        Optional.of("2001:db8::7"), Optional.empty(), OptionalInt.empty(), OptionalInt.empty(),
        OptionalInt.empty(), OptionalInt.of(40004), OptionalInt.empty(), OptionalInt.empty());
    final AdvertisedAddresses advertised = new AdvertisedAddresses(PEER, deployment, List.of());
    final List<Multiaddr> listen = List.of(Multiaddr.parse("/ip4/10.0.0.5/tcp/9091"),
        Multiaddr.parse("/ip4/10.0.0.5/udp/9094/quic-v1"));
    assertThat(texts(advertised.compute(listen))).containsExactly(
        "/ip4/198.51.100.4/tcp/9091" + P2P,
        "/ip4/198.51.100.4/udp/40004/quic-v1" + P2P,
        "/ip6/2001:db8::7/tcp/9091" + P2P,
        "/ip6/2001:db8::7/udp/40004/quic-v1" + P2P);
  }

  @Test
  void compute_shouldAnnounceQuicOnTheBoundPort_whenNoExternalQuicPortIsSet() {
    final AdvertisedAddresses advertised = new AdvertisedAddresses(PEER,
        deployed("198.51.100.4", OptionalInt.empty()), List.of());
    final List<Multiaddr> listen = List.of(Multiaddr.parse("/ip4/10.0.0.5/tcp/9091"),
        Multiaddr.parse("/ip4/10.0.0.5/udp/9094/quic-v1"),
        Multiaddr.parse("/ip4/203.0.113.9/udp/9094/quic-v1"));
    assertThat(texts(advertised.compute(listen))).containsExactly(
        "/ip4/203.0.113.9/udp/9094/quic-v1" + P2P,
        "/ip4/198.51.100.4/tcp/9091" + P2P,
        "/ip4/198.51.100.4/udp/9094/quic-v1" + P2P,
        "/ip6/2001:db8::7/tcp/9091" + P2P,
        "/ip6/2001:db8::7/udp/9094/quic-v1" + P2P);
  }

  @Test
  void compute_shouldAnnounceNoQuic_whenThereIsNoQuicListener_evenWithAnExternalQuicPort() {
    final DeploymentConfig deployment = new DeploymentConfig(Optional.of("198.51.100.4"),
        Optional.empty(), Optional.empty(), OptionalInt.empty(), OptionalInt.empty(),
        OptionalInt.empty(), OptionalInt.of(40004), OptionalInt.empty(), OptionalInt.empty());
    final AdvertisedAddresses advertised = new AdvertisedAddresses(PEER, deployment, List.of());
    assertThat(texts(advertised.compute(List.of(Multiaddr.parse("/ip4/10.0.0.5/tcp/9091")))))
        .containsExactly("/ip4/198.51.100.4/tcp/9091" + P2P);
  }

  @Test
  void compute_shouldListTheAutoTlsSniFormsFirst_whenTheCertificateCoversTheZone() {
    final String zone = "k51qzi5uqu5dexample.libp2p.direct";
    final AdvertisedAddresses advertised = new AdvertisedAddresses(PEER,
        deployed("198.51.100.4", OptionalInt.empty()), List.of());
    final List<Multiaddr> listen = List.of(Multiaddr.parse("/ip4/10.0.0.5/tcp/9091"),
        Multiaddr.parse("/ip4/10.0.0.5/tcp/9092/ws"));
    assertThat(texts(advertised.compute(listen, true, Optional.of(zone)))).containsExactly(
        "/ip4/198.51.100.4/tcp/9092/tls/sni/198-51-100-4." + zone + "/ws" + P2P,
        "/ip6/2001:db8::7/tcp/9092/tls/sni/2001-db8--7." + zone + "/ws" + P2P,
        "/ip4/198.51.100.4/tcp/9091" + P2P,
        "/ip4/198.51.100.4/tcp/9092/tls/ws" + P2P,
        "/ip4/198.51.100.4/tcp/9092/ws" + P2P,
        "/ip6/2001:db8::7/tcp/9091" + P2P,
        "/ip6/2001:db8::7/tcp/9092/tls/ws" + P2P,
        "/ip6/2001:db8::7/tcp/9092/ws" + P2P);
    // Without TLS on the port, no TLS form at all.
    assertThat(texts(advertised.compute(listen, false, Optional.of(zone))))
        .noneMatch(a -> a.contains("/tls"));
  }

  @Test
  void ipLabel_shouldFollowTheLibp2pDirectRule() {
    assertThat(AdvertisedAddresses.ipLabel(Multiaddr.parse("/ip4/1.2.3.4").components().get(0)))
        .isEqualTo("1-2-3-4");
    assertThat(AdvertisedAddresses.ipLabel(Multiaddr.parse("/ip6/2001:db8::").components()
        .get(0))).isEqualTo("2001-db8--0");
    assertThat(AdvertisedAddresses.ipLabel(Multiaddr.parse("/ip6/::1").components().get(0)))
        .isEqualTo("0--1");
  }
}
