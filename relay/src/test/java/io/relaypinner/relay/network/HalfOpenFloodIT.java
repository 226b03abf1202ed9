package io.relaypinner.relay.network;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.common.budget.Resource;
import io.relaypinner.common.budget.Scope;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.libp2p.host.Connection;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.HostConfig;
import io.relaypinner.libp2p.host.LimitCounters.Limit;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.relay.RelayNode;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.identity.NodeIdentity;
import io.relaypinner.relay.testing.PrometheusTextParser;
import io.relaypinner.relay.testing.SocketFlood;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 36's attack on libp2p admission, in process: 1,100 silent TCP connections from
 * 127.0.0.2 (Linux routes all of 127/8 to lo; the attacker binds its sockets there), re-opened
 * as the relay closes them, while honest peers dial from 127.0.0.1. With the shipped defaults
 * ({@code RELAY_MAX_CONNECTIONS} 1,024, {@code RELAY_MAX_CONNECTIONS_PER_IP} 64) 127.0.0.2 holds
 * at most 64 half-open slots and the honest dials succeed; before the per-IP budget the flood
 * held all 1,024 for the 10 s handshake, again and again, and both honest dials failed.
 *
 * <p>The same attack against the launcher's relay JVM is {@code SurfaceAttackIT} in the cli
 * module; this one stays for the budget's scopes, which only a relay in this JVM shows (the
 * attacker's IP scope holds at most 64 connections).
 */
class HalfOpenFloodIT {
  private static final int ATTACK_SOCKETS = 1_100;

  private final SecureRandom random = new SecureRandom();
  private final EventLoops loops = EventLoops.create(1, "flood-clients");
  private final HttpClient http = HttpClient.newHttpClient();
  private RelayNode node;
  private SocketFlood attacker;
  @TempDir
  Path dataDir;

  @AfterEach
  void close() throws Exception {
    if (attacker != null) {
      attacker.close();
    }
    if (node != null) {
      node.close();
    }
    loops.shutdownGracefully(Duration.ofSeconds(2));
  }

  @Test
  void halfOpenFloodFromOneIp_shouldHoldOnlyItsShare_whileHonestPeersConnect() throws Exception {
    final RelayConfig config = RelayConfig.fromEnvironment(Map.of(
        "DATASTORE_PATH", dataDir.toString(), "METRICS_HOST", "127.0.0.1", "METRICS_PORT", "0",
        "RELAY_LISTEN_IPV4", "127.0.0.1", "RELAY_TCP_PORT", "0", "RELAY_WS_PORT", "0",
        "RELAY_QUIC_PORT", "0",
        "RELAY_DISABLE_IPV6", "true"));
    final PrivateKey key = Keys.generate(KeyType.ED25519, random);
    node = new RelayNode(config, new NodeIdentity(key, key.publicKey().peerId(),
        NodeIdentity.servingZone(key.publicKey().peerId(), "libp2p.direct"),
        NodeIdentity.Source.ENVIRONMENT), new PrometheusRegistry(), Clock.systemUTC());
    node.start();
    final Host relay = node.network().host();
    final Multiaddr target = relay.listenAddresses().get(0).withPeerId(relay.peerId());
    final InetSocketAddress tcp = new InetSocketAddress("127.0.0.1",
        Integer.parseInt(target.toString().split("/")[4]));

    attacker = new SocketFlood(new InetSocketAddress("127.0.0.2", 0), tcp);
    attacker.openAll(ATTACK_SOCKETS);
    attacker.start();
    // Every one beyond the IP's share is refused at accept (and re-opened, and refused again).
    await().atMost(Duration.ofSeconds(20)).until(() ->
        relay.limitCounters().get(Limit.MAX_CONNECTIONS_PER_IP) >= ATTACK_SOCKETS - 64);
    assertThat(attacker.opened()).isGreaterThanOrEqualTo(ATTACK_SOCKETS);

    // Meanwhile: honest peers from 127.0.0.1 connect, and their connections work.
    try (Host first = client(); Host second = client()) {
      final Connection a = first.dial(target).get(10, TimeUnit.SECONDS);
      final Connection b = second.dial(target).get(10, TimeUnit.SECONDS);
      first.ping(a).get(10, TimeUnit.SECONDS);
      second.ping(b).get(10, TimeUnit.SECONDS);
    }
    final Scope attackerScope = node.budget().libp2pIps().peek("127.0.0.2/32");
    assertThat(attackerScope).isNotNull();
    assertThat(attackerScope.used(Resource.CONNECTIONS)).isLessThanOrEqualTo(64);
    assertThat(node.budget().libp2p().used(Resource.CONNECTIONS)).isLessThanOrEqualTo(64 + 2);
    assertThat(relay.limitCounters().get(Limit.MAX_CONNECTIONS)).isZero();

    final PrometheusTextParser.Exposition metrics = PrometheusTextParser.parse(http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.http().port().getAsInt()
            + "/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body());
    assertThat(metrics.samples("libp2p_limit_hits_total")).anySatisfy(sample -> {
      assertThat(sample.labels()).isEqualTo(Map.of("limit", "max_connections_per_ip"));
      assertThat(sample.value()).isGreaterThanOrEqualTo(ATTACK_SOCKETS - 64);
    });
    assertThat(metrics.samples("relay_resource_limit_hits_total")).anySatisfy(sample -> {
      assertThat(sample.labels()).containsEntry("scope", "ip")
          .containsEntry("resource", "connections");
      assertThat(sample.value()).isGreaterThanOrEqualTo(ATTACK_SOCKETS - 64);
    });
  }

  private Host client() {
    return new Host(Keys.generate(KeyType.ED25519, random), HostConfig.DEFAULT, loops,
        Clock.systemUTC());
  }
}
