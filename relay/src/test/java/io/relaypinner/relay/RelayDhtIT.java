package io.relaypinner.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.common.budget.LimitListener;
import io.relaypinner.common.budget.Limits;
import io.relaypinner.common.budget.Scope;
import io.relaypinner.ipfs.pin.PinHolder;
import io.relaypinner.libp2p.crypto.Ed25519PrivateKey;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.HostConfig;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.libp2p.protocol.kad.KadConfig;
import io.relaypinner.libp2p.protocol.kad.KadDht;
import io.relaypinner.libp2p.protocol.kad.KadLookup;
import io.relaypinner.libp2p.protocol.kad.KadPeer;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.Multihash;
import io.relaypinner.relay.config.DhtMode;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.identity.NodeIdentity;
import io.relaypinner.relay.testing.PrometheusTextParser;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A {@link RelayNode} with {@code RELAY_DHT_MODE=server} bootstrapped to three Java
 * {@link KadDht} servers on loopback (one relay and one small DHT per class): the relay joins
 * their routing tables, a GET_PROVIDERS lookup for a root the relay has pinned finds the relay,
 * the relay provides that root (ADD_PROVIDER: the servers store a record for it), and the DHT's
 * counters are in {@code /metrics}.
 */
class RelayDhtIT {
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final byte[] PINNED = "pinned on the relay".getBytes(StandardCharsets.UTF_8);

  @TempDir
  static Path dir;

  private static EventLoops loops;
  private static final List<Host> hosts = new ArrayList<>();
  private static final List<KadDht> dhts = new ArrayList<>();
  private static RelayNode relay;
  private static NodeIdentity identity;

  @BeforeAll
  static void start() throws Exception {
    loops = EventLoops.create(2, "relay-dht-it");
    final List<String> bootstrap = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      final Host host = new Host(Keys.generate(KeyType.ED25519, RANDOM), HostConfig.builder()
          .listenAddresses(List.of(Multiaddr.parse("/ip4/127.0.0.1/tcp/0")))
          .agentVersion("relay-pinner/kad-test").build(), loops, Clock.systemUTC());
      host.start().get(5, TimeUnit.SECONDS);
      hosts.add(host);
      dhts.add(KadDht.start(host, KadConfig.DEFAULT, KadDht.Mode.SERVER,
          Scope.root("dht_providers", Limits.NONE, LimitListener.NONE), host::listenAddresses));
      bootstrap.add(host.listenAddresses().get(0).withPeerId(host.peerId()).toString());
    }
    final byte[] seed = new byte[32];
    RANDOM.nextBytes(seed);
    final PrivateKey key = Ed25519PrivateKey.fromSeed(seed);
    identity = new NodeIdentity(key, key.publicKey().peerId(),
        NodeIdentity.servingZone(key.publicKey().peerId(), "libp2p.direct"),
        NodeIdentity.Source.ENVIRONMENT);
    final RelayConfig config = RelayConfig.builder().dataDir(dir.resolve("relay"))
        .metricsHost("127.0.0.1").metricsPort(0).listenIpv4("127.0.0.1").tcpPort(0).wsPort(0)
        .quicPort(0)
        .ipv6Disabled(true).bootstrapPeers(bootstrap).dhtMode(DhtMode.SERVER).build();
    relay = new RelayNode(config, identity, new PrometheusRegistry(), Clock.systemUTC());
    relay.start();
    final Cid root = Cid.v1(Multicodec.RAW, Multihash.sha2_256(PINNED));
    relay.storage().blockstore().put(root, PINNED);
    relay.storage().pins().pin(root, PinHolder.of("test", "dht"));
  }

  @AfterAll
  static void stop() {
    if (relay != null) {
      relay.close();
    }
    dhts.forEach(KadDht::close);
    hosts.forEach(Host::close);
    loops.shutdownGracefully(Duration.ofSeconds(3));
  }

  @Test
  void relay_shouldJoinTheDhtAndBeFoundAsProvider_ofWhatItPinned() throws Exception {
    final KadDht relayDht = relay.network().dht().orElseThrow();
    assertThat(relayDht.mode()).isEqualTo(KadDht.Mode.SERVER);
    // Bootstrap dialled the three, identify said they speak the DHT, and the refresh after it
    // made them know each other and the relay (the relay advertises the protocol).
    await().atMost(Duration.ofSeconds(15)).until(() -> relayDht.table().size() == 3
        && dhts.stream().allMatch(d -> d.table().contains(identity.peerId())));

    final byte[] key = Multihash.sha2_256(PINNED).bytes();
    final KadLookup.Result found = dhts.get(2).findProviders(key, 1).get(20, TimeUnit.SECONDS);
    assertThat(found.providers()).extracting(KadPeer::id).contains(identity.peerId());
    assertThat(found.providers().stream().filter(p -> p.id().equals(identity.peerId()))
        .findFirst().orElseThrow().addresses()).isNotEmpty();
    // Content the relay does not hold: nobody provides it.
    final KadLookup.Result none = dhts.get(1).findProviders(
        Multihash.sha2_256("nobody has this".getBytes(StandardCharsets.UTF_8)).bytes(), 1)
        .get(20, TimeUnit.SECONDS);
    assertThat(none.providers()).isEmpty();

    final HttpResponse<String> metrics = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + relay.http().port().getAsInt() + "/metrics")).build(),
        HttpResponse.BodyHandlers.ofString());
    final PrometheusTextParser.Exposition exposition =
        PrometheusTextParser.parse(metrics.body());
    assertThat(exposition.samples("relay_dht_server_requests_total"))
        .anyMatch(s -> "get_providers".equals(s.labels().get("type")) && s.value() >= 1);
    assertThat(exposition.samples("relay_dht_routing_table_peers"))
        .anyMatch(s -> s.value() == 3);
    assertThat(exposition.samples("relay_dht_server_mode")).anyMatch(s -> s.value() == 1);
    assertThat(exposition.samples("relay_dht_client_total"))
        .anyMatch(s -> "lookups".equals(s.labels().get("event")) && s.value() >= 1);
    assertThat(exposition.samples("relay_resource_limit_hits_total")).isNotNull();
  }

  @Test
  void relay_shouldProvideWhatItPinned_toTheServersStores() throws Exception {
    // The root pinned at start is announced with the first batch (10 s): the servers store a
    // provider record for the relay with its addresses (not only the server-mode answer).
    final byte[] key = Multihash.sha2_256(PINNED).bytes();
    await().atMost(Duration.ofSeconds(30)).until(() -> dhts.stream().anyMatch(d ->
        d.providers().providers(key, 64).stream()
            .anyMatch(p -> p.id().equals(identity.peerId()) && !p.addresses().isEmpty())));

    final HttpResponse<String> metrics = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + relay.http().port().getAsInt() + "/metrics")).build(),
        HttpResponse.BodyHandlers.ofString());
    final PrometheusTextParser.Exposition exposition =
        PrometheusTextParser.parse(metrics.body());
    assertThat(exposition.samples("relay_dht_provide_keys")).anyMatch(s -> s.value() == 1);
    assertThat(exposition.samples("relay_dht_provide_total"))
        .anyMatch(s -> "provided".equals(s.labels().get("result")) && s.value() >= 1);
    assertThat(exposition.samples("relay_dht_provide_backlog")).isNotEmpty();
    assertThat(relay.network().dht()).isPresent();
  }
}
