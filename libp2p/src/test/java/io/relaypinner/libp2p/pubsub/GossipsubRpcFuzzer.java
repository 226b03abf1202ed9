package io.relaypinner.libp2p.pubsub;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import com.google.protobuf.InvalidProtocolBufferException;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.pubsub.pb.PubsubProtos.RPC;
import io.relaypinner.multiformats.PeerId;
import io.relaypinner.testkit.FuzzCheck;
import io.relaypinner.testkit.MutableClock;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.Random;

/**
 * Jazzer: gossipsub RPCs from one peer, parsed and handled by one long-lived engine (so state
 * piles up as it would): nothing but a protobuf error may escape, and the engine's maps stay
 * within their bounds.
 */
class GossipsubRpcFuzzer {
  private static final MutableClock CLOCK = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
  private static final GossipsubEngine ENGINE = new GossipsubEngine(
      Keys.generate(KeyType.ED25519, new SecureRandom()), GossipsubConfig.DEFAULT, CLOCK,
      new Random(1), (peer, rpc) -> { });
  private static final PeerId PEER = Keys.generate(KeyType.ED25519, new SecureRandom())
      .publicKey().peerId();
  private static int calls;

  static {
    ENGINE.subscribe("/orbitdb/zdpuFuzz");
    ENGINE.outboundOpened(PEER, true);
  }

  @FuzzTest
  void handle(final byte[] input) throws Exception {
    FuzzCheck.accepts(() -> ENGINE.handleRpc(PEER, RPC.parseFrom(input)),
        InvalidProtocolBufferException.class);
    if (++calls % 64 == 0) {
      CLOCK.advance(Duration.ofSeconds(1));
      ENGINE.heartbeat();
    }
    assertThat(ENGINE.backoffEntries()).isLessThanOrEqualTo(GossipsubConfig.DEFAULT
        .maxBackoffsPerPeer());
    assertThat(ENGINE.topicsOf(PEER).size()).isLessThanOrEqualTo(GossipsubConfig.DEFAULT
        .maxTopicsPerPeer());
  }
}
