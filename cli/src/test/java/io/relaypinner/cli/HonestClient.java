package io.relaypinner.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.host.Connection;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.HostConfig;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.Multihash;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * What an honest client of a {@link RelayProcess} expects while (or after) an attack runs: the
 * relay answers {@code /health}, serves every seeded file from {@code /ipfs/<cid>}, and accepts a
 * libp2p dial from a fresh PeerId (TCP, Noise, Yamux, then a ping); after an attack also an
 * honest JS OrbitDB user ({@link #assertServed(RelayProcess, HonestJsClient)}: a dial, a sync,
 * an /ipfs GET). Each check is bounded, so a starved relay fails the test instead of hanging it.
 */
public final class HonestClient {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration DIAL_TIMEOUT = Duration.ofSeconds(15);

  private HonestClient() {}

  /**
   * All three checks: {@link #assertHealthy}, {@link #assertSeededFilesServed},
   * {@link #assertDialable}.
   */
  public static void assertServed(final RelayProcess relay) throws Exception {
    assertHealthy(relay);
    assertSeededFilesServed(relay);
    assertDialable(relay);
  }

  /**
   * What every attack test asserts once its attack is over (issue 36, "Must show"): the three
   * checks of {@link #assertServed(RelayProcess)}, then a round of the honest JS client
   * {@code js} ({@link HonestJsClient#assertServed}: it dials the relay again, writes a new
   * database naming a new file, and the relay replicates it, syncs it and serves the file).
   */
  public static void assertServed(final RelayProcess relay, final HonestJsClient js)
      throws Exception {
    assertServed(relay);
    js.assertServed(relay);
  }

  /** {@code GET /health} answers 200 with status ok. */
  public static void assertHealthy(final RelayProcess relay)
      throws IOException, InterruptedException {
    final HttpResponse<String> response = relay.get("/health");
    assertThat(response.statusCode()).as("GET /health").isEqualTo(200);
    final JsonNode health = JSON.readTree(response.body());
    assertThat(health.get("status").asText()).isEqualTo("ok");
  }

  /** Each {@link RelayProcess#seeded()} CID answers {@code GET /ipfs/<cid>} 200 with its bytes. */
  public static void assertSeededFilesServed(final RelayProcess relay)
      throws IOException, InterruptedException {
    for (final Cid cid : relay.seeded()) {
      final HttpResponse<byte[]> response = relay.getBytes("/ipfs/" + cid);
      assertThat(response.statusCode()).as("GET /ipfs/" + cid).isEqualTo(200);
      assertThat(Cid.v1(cid.codec(), Multihash.sha2_256(response.body())))
          .as("bytes of /ipfs/" + cid).isEqualTo(cid);
    }
  }

  /** A fresh PeerId dials the relay's TCP address, the relay is who it says, and a ping returns. */
  public static void assertDialable(final RelayProcess relay) throws Exception {
    final EventLoops loops = EventLoops.create(1, "honest-client");
    try (Host client = new Host(Keys.generate(KeyType.ED25519, new SecureRandom()),
        HostConfig.DEFAULT, loops, Clock.systemUTC())) {
      final Connection connection = client.dial(Multiaddr.parse(relay.tcpMultiaddr()))
          .get(DIAL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      assertThat(connection.remotePeer().toBase58()).isEqualTo(relay.peerId());
      assertThat(client.ping(connection).get(DIAL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS))
          .isNotNull();
    } finally {
      loops.shutdownGracefully(Duration.ofSeconds(2));
    }
  }
}
