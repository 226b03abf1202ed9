package io.relaypinner.libp2p.protocol.kad;

import io.relaypinner.multiformats.Multihash;
import io.relaypinner.multiformats.PeerId;
import java.util.Random;

/** Peer ids for DHT tests: sha2-256 multihashes of random bytes, cheap to make by the hundred. */
final class KadTestPeers {
  private KadTestPeers() {}

  static PeerId random(final Random random) {
    final byte[] digest = new byte[32];
    random.nextBytes(digest);
    return new PeerId(Multihash.of(0x12, digest));
  }

  /** A content key (a sha2-256 multihash's bytes). */
  static byte[] contentKey(final Random random) {
    final byte[] data = new byte[16];
    random.nextBytes(data);
    return Multihash.sha2_256(data).bytes();
  }
}
