package io.relaypinner.libp2p.protocol.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.host.Connection;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.HostConfig;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.libp2p.protocol.relay.pb.CircuitProtos.Status;
import io.relaypinner.multiformats.Multiaddr;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 36's attack on circuit relay: 64 PeerIds from one IP (127.0.0.2) reserve and open
 * circuits to each other, with the shipped limits ({@link CircuitRelayConfig#DEFAULT}). PeerIds
 * are free, so only the IP key's cap ({@link CircuitRelayConfig#DEFAULT_MAX_CIRCUITS_PER_IP})
 * stops one host from holding the circuits (10 GiB and 20 minutes each); an honest pair from
 * 127.0.0.1 still gets its circuit. The relay dials the attacker's hosts (listening on
 * 127.0.0.2), so that their connections come from that address; which side dialled does not
 * matter to the hop service.
 *
 * <p>The same attack against the launcher's relay JVM (heap after GC bounded, the refusals read
 * from {@code /metrics}) is {@code Libp2pAttackIT} in the cli module; this one stays for the
 * engine's own counts with {@link CircuitRelayConfig#DEFAULT}, without a relay node.
 */
class CircuitRelayPerIpIT {
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final int ATTACKERS = 64;
  private final EventLoops loops = EventLoops.create(2, "relay-per-ip");
  private final List<Host> clients = new ArrayList<>();
  private Host relayHost;
  private CircuitRelay relay;

  @BeforeEach
  void start() throws Exception {
    relayHost = host("127.0.0.1");
    relay = CircuitRelay.start(relayHost, CircuitRelayConfig.DEFAULT, Clock.systemUTC(),
        relayHost::listenAddresses);
    relayHost.start().get(5, TimeUnit.SECONDS);
  }

  @AfterEach
  void stop() {
    relay.close();
    clients.forEach(Host::close);
    relayHost.close();
    loops.shutdownGracefully(Duration.ofSeconds(3));
  }

  private Host host(final String ip) {
    return new Host(Keys.generate(KeyType.ED25519, RANDOM), HostConfig.builder()
        .listenAddresses(List.of(Multiaddr.parse("/ip4/" + ip + "/tcp/0")))
        .agentVersion("relay-pinner/per-ip-test").build(), loops, Clock.systemUTC());
  }

  /** A client on {@code ip} that accepts every circuit (keeping the stream open). */
  private Host client(final String ip) throws Exception {
    final Host client = host(ip);
    clients.add(client);
    HopClient.acceptCircuits(client);
    client.start().get(5, TimeUnit.SECONDS);
    return client;
  }

  /** A connection of {@code client} to the relay, from {@code client}'s side. */
  private Connection connectionFromRelay(final Host client) throws Exception {
    relayHost.dial(client.listenAddresses().get(0).withPeerId(client.peerId()))
        .get(10, TimeUnit.SECONDS);
    await().atMost(Duration.ofSeconds(10))
        .until(() -> client.connection(relayHost.peerId()).isPresent());
    return client.connection(relayHost.peerId()).orElseThrow();
  }

  private Connection connectionToRelay(final Host client) throws Exception {
    return client.dial(relayHost.listenAddresses().get(0).withPeerId(relayHost.peerId()))
        .get(10, TimeUnit.SECONDS);
  }

  @Test
  void manyPeerIdsFromOneIp_shouldHoldOnlyTheIpsCircuits_whileAnHonestPairGetsOne()
      throws Exception {
    final List<Host> attackers = new ArrayList<>();
    final List<Connection> connections = new ArrayList<>();
    for (int i = 0; i < ATTACKERS; i++) {
      final Host attacker = client("127.0.0.2");
      attackers.add(attacker);
      connections.add(connectionFromRelay(attacker));
    }
    for (final Connection connection : connections) {
      assertThat(HopClient.reserve(connection)).isEqualTo(Status.OK);
    }
    int admitted = 0;
    int refused = 0;
    for (int i = 0; i < ATTACKERS; i++) {
      final Status status = HopClient.connect(connections.get(i),
          attackers.get((i + 1) % ATTACKERS).peerId());
      if (status == Status.OK) {
        admitted++;
      } else {
        assertThat(status).isEqualTo(Status.RESOURCE_LIMIT_EXCEEDED);
        refused++;
      }
    }
    assertThat(admitted).isEqualTo(CircuitRelayConfig.DEFAULT_MAX_CIRCUITS_PER_IP);
    assertThat(refused).isEqualTo(ATTACKERS - CircuitRelayConfig.DEFAULT_MAX_CIRCUITS_PER_IP);
    assertThat(relay.engine().refusals().get(RelayRefusal.IP_CIRCUIT_LIMIT))
        .isEqualTo(refused);
    assertThat(relay.engine().openCircuits())
        .isEqualTo(CircuitRelayConfig.DEFAULT_MAX_CIRCUITS_PER_IP);

    // An honest pair from 127.0.0.1: the destination reserves, the source gets its circuit.
    final Host destination = client("127.0.0.1");
    final Host source = client("127.0.0.1");
    assertThat(HopClient.reserve(connectionToRelay(destination))).isEqualTo(Status.OK);
    assertThat(HopClient.connect(connectionToRelay(source), destination.peerId()))
        .isEqualTo(Status.OK);
    assertThat(relay.engine().openCircuits())
        .isEqualTo(CircuitRelayConfig.DEFAULT_MAX_CIRCUITS_PER_IP + 1);
  }
}
