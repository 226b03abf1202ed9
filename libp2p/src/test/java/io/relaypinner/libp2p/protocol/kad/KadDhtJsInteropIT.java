package io.relaypinner.libp2p.protocol.kad;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.relaypinner.common.budget.LimitListener;
import io.relaypinner.common.budget.Limits;
import io.relaypinner.common.budget.Scope;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.HostConfig;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.Multihash;
import io.relaypinner.testkit.JsPeer;
import io.relaypinner.testkit.NodeJs;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The Java DHT in server mode inside a local DHT of six js-libp2p nodes (@libp2p/kad-dht 16.4.5,
 * server mode; interop/js/dht, ../common/kad-peer.mjs): what Java provides, JS finds; what JS
 * provides, Java finds; JS lookups go through the Java node. One JS process and one Java host for
 * the class.
 */
class KadDhtJsInteropIT {
  private static final Duration STEP = Duration.ofSeconds(60);
  private static final SecureRandom RANDOM = new SecureRandom();
  private static EventLoops loops;
  private static Host host;
  private static KadDht dht;
  private static JsPeer js;
  private static final List<String> jsIds = new ArrayList<>();

  @BeforeAll
  static void network() throws Exception {
    js = NodeJs.start("dht", "../common/kad-peer.mjs", "network", "6", "170");
    final JsonNode listening = js.nextEvent("listening", STEP);
    final List<Multiaddr> bootstrap = new ArrayList<>();
    for (final JsonNode peer : listening.get("peers")) {
      jsIds.add(peer.get("id").asText());
      bootstrap.add(Multiaddr.parse(peer.get("addrs").get(0).asText()));
    }
    loops = EventLoops.create(2, "kad-js");
    host = new Host(Keys.generate(KeyType.ED25519, RANDOM), HostConfig.builder()
        .listenAddresses(List.of(Multiaddr.parse("/ip4/127.0.0.1/tcp/0")))
        .agentVersion("relay-pinner/kad-interop-test").build(), loops, Clock.systemUTC());
    host.start().get(5, TimeUnit.SECONDS);
    dht = KadDht.start(host, KadConfig.DEFAULT, KadDht.Mode.SERVER,
        Scope.root("dht_providers", Limits.NONE, LimitListener.NONE), host::listenAddresses);
    dht.bootstrap(bootstrap.subList(0, 2)).get(30, TimeUnit.SECONDS);
    await().atMost(Duration.ofSeconds(20)).until(() -> dht.table().size() >= 2);
    dht.refresh().get(60, TimeUnit.SECONDS);
  }

  @AfterAll
  static void stop() {
    if (js != null) {
      js.close();
    }
    if (dht != null) {
      dht.close();
    }
    if (host != null) {
      host.close();
    }
    if (loops != null) {
      loops.shutdownGracefully(Duration.ofSeconds(3));
    }
  }

  private static Cid randomCid() {
    final byte[] data = new byte[32];
    RANDOM.nextBytes(data);
    return Cid.v1(Multicodec.RAW, Multihash.sha2_256(data));
  }

  @Test
  void javaProvides_jsFindsJavaAmongTheProviders() throws Exception {
    final Cid cid = randomCid();

    final KadClient.ProvideResult provided = dht.provide(cid.multihash().bytes())
        .get(60, TimeUnit.SECONDS);
    js.send("find 5 " + cid + " 20000");
    final JsonNode found = js.nextEvent("providers", STEP);

    assertThat(provided.sent()).isGreaterThanOrEqualTo(3);
    assertThat(found.get("providers")).isNotEmpty();
    assertThat(found.get("providers").get(0).get("id").asText())
        .isEqualTo(host.peerId().toString());
    assertThat(found.get("providers").get(0).get("addrs").toString())
        .contains(host.listenAddresses().get(0).toString());
  }

  @Test
  void jsProvides_javaFindsTheJsNode() throws Exception {
    final Cid cid = randomCid();
    js.send("provide 3 " + cid);
    js.nextEvent("provided", STEP);

    final KadLookup.Result found = dht.findProviders(cid.multihash().bytes(), 1)
        .get(60, TimeUnit.SECONDS);

    assertThat(found.providers()).extracting(p -> p.id().toString())
        .containsExactly(jsIds.get(3));
    assertThat(found.providers().get(0).addresses()).isNotEmpty();
  }

  @Test
  void jsLookups_shouldBeAnsweredByTheJavaServer() throws Exception {
    final long before = dht.server().counters().get("request_find_node");

    js.send("closest 4 " + HexFormat.of().formatHex(host.peerId().bytes()));
    final JsonNode closest = js.nextEvent("closest", STEP);

    assertThat(closest.get("peers").toString()).contains(host.peerId().toString());
    assertThat(dht.server().counters().get("request_find_node")).isGreaterThan(before);
    assertThat(dht.counters()).containsEntry("server_refused_malformed", 0L);
  }
}
