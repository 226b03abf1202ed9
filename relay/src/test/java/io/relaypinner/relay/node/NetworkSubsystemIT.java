package io.relaypinner.relay.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.libp2p.protocol.kad.KadConfig;
import io.relaypinner.libp2p.protocol.kad.KadDht;
import io.relaypinner.libp2p.transport.ws.ServerTlsSource;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.relay.config.DhtMode;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.network.NodeAddresses;
import io.relaypinner.relay.tls.CertificateStore;
import io.relaypinner.testkit.MutableClock;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link NetworkSubsystem} alone, bound to 127.0.0.1 port 0, with a {@link MutableClock}. */
class NetworkSubsystemIT {
  @TempDir
  Path dir;

  private final MutableClock clock = NodeFixtures.clock();
  private final EventLoops loops = EventLoops.create(1, "network-it");

  @AfterEach
  void tearDown() {
    loops.shutdownGracefully(Duration.ofSeconds(2));
  }

  private NetworkSubsystem network(final RelayConfig config, final CertificateStore certificates) {
    return new NetworkSubsystem(config, NodeFixtures.IDENTITY, NodeFixtures.advertiser(config),
        List.of(), ServerTlsSource.NONE, certificates, loops, new PrometheusRegistry(), clock,
        NodeTuning.DEFAULT);
  }

  @Test
  void network_shouldListenAdvertiseAndRunItsProtocols_thenCloseTheListeners() throws Exception {
    final RelayConfig config = NodeFixtures.config(dir);
    final CertificateStore certificates = NodeFixtures.certificates(dir.resolve("tls"), clock);
    final NetworkSubsystem network = network(config, certificates);
    final List<Multiaddr> listening = network.host().listenAddresses();
    // TCP, WebSocket and QUIC (port 0 each), IPv4 only.
    assertThat(listening).hasSize(3);
    assertThat(listening.get(2).toString()).matches("/ip4/127\\.0\\.0\\.1/udp/\\d+/quic-v1");
    assertThat(network.advertisedAddresses()).isNotEmpty()
        .allMatch(address -> address.peerId().isPresent());
    // Same inputs, same list: remembered, not computed again.
    assertThat(network.advertisedAddresses()).isSameAs(network.advertisedAddresses());
    assertThat(network.host().protocols().protocols())
        .contains("/libp2p/circuit/relay/0.2.0/hop", "/libp2p/autonat/1.0.0");
    assertThat(network.pubsub()).isNotNull();
    assertThat(network.circuitRelay()).isNotNull();
    assertThat(network.autoNat()).isPresent();
    assertThat(network.discovery()).isPresent();
    // RELAY_DHT_MODE's default: a DHT client, which does not advertise /ipfs/kad/1.0.0.
    assertThat(network.dht()).hasValueSatisfying(dht ->
        assertThat(dht.mode()).isEqualTo(KadDht.Mode.CLIENT));
    assertThat(network.host().protocols().protocols()).doesNotContain(KadConfig.PROTOCOL_ID);
    // Loopback only, and no deployment: the broker could dial none of them.
    assertThat(network.addresses().dialBack()).isNotEmpty()
        .noneMatch(NodeAddresses::isDialable);
    final int port = Integer.parseInt(listening.get(0).toString().split("/")[4]);

    network.close();
    network.close();
    certificates.close();

    try (Socket socket = new Socket()) {
      assertThatThrownBy(() -> socket.connect(new InetSocketAddress("127.0.0.1", port), 2_000))
          .isInstanceOf(ConnectException.class);
    }
  }

  @Test
  void network_shouldRunTheDhtAsConfigured_offOrServer() throws Exception {
    final CertificateStore certificates = NodeFixtures.certificates(dir.resolve("tls"), clock);
    final NetworkSubsystem off = network(NodeFixtures.config(dir).toBuilder()
        .dhtMode(DhtMode.OFF).build(), certificates);
    try {
      assertThat(off.dht()).isEmpty();
      assertThat(off.host().protocols().protocols()).doesNotContain(KadConfig.PROTOCOL_ID);
    } finally {
      off.close();
    }
    final NetworkSubsystem server = network(NodeFixtures.config(dir).toBuilder()
        .dhtMode(DhtMode.SERVER).build(), certificates);
    try {
      assertThat(server.dht().orElseThrow().mode()).isEqualTo(KadDht.Mode.SERVER);
      assertThat(server.host().protocols().protocols()).contains(KadConfig.PROTOCOL_ID);
    } finally {
      server.close();
      certificates.close();
    }
    assertThat(server.host().protocols().protocols()).doesNotContain(KadConfig.PROTOCOL_ID);
    // auto: server only when deployed and advertising a public address.
    final List<Multiaddr> loopback = List.of(Multiaddr.parse("/ip4/127.0.0.1/tcp/9091"));
    final List<Multiaddr> public4 = List.of(Multiaddr.parse("/ip4/203.0.113.8/tcp/9091"));
    final RelayConfig deployed = NodeFixtures.config(dir).toBuilder().publicIpv4("203.0.113.8")
        .build();
    assertThat(NetworkSubsystem.publiclyReachable(deployed, public4)).isTrue();
    assertThat(NetworkSubsystem.publiclyReachable(deployed, loopback)).isFalse();
    assertThat(NetworkSubsystem.publiclyReachable(NodeFixtures.config(dir), public4)).isFalse();
  }

  @Test
  void network_shouldFailAndCloseTheHost_whenTheIpv4PortIsTaken() throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
      final RelayConfig config = RelayConfig.builder().dataDir(dir).listenIpv4("127.0.0.1")
          .tcpPort(taken.getLocalPort()).wsPort(0).quicPort(0).ipv6Disabled(true).build();
      final CertificateStore certificates = NodeFixtures.certificates(dir.resolve("tls"), clock);
      assertThatThrownBy(() -> network(config, certificates))
          .isInstanceOf(UncheckedIOException.class).hasMessageContaining("cannot listen on");
      certificates.close();
    }
  }
}
