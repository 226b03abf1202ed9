package io.relaypinner.libp2p.protocol.identify;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netty.buffer.Unpooled;
import io.relaypinner.libp2p.core.BadPeerException;
import io.relaypinner.multiformats.PeerId;
import io.relaypinner.testkit.FuzzCheck;

/** Jazzer: an identify message from the remote, parsed and accumulated as a result. */
class IdentifyFuzzer {
  private static final PeerId REMOTE =
      PeerId.parse("12D3KooWD3eckifWpRn9wQpMG9R9hX3sD158z7EqHWmweQAJU5SA");

  @FuzzTest
  void parse(final byte[] input) throws Exception {
    FuzzCheck.accepts(() -> {
      final IdentifyAccumulator accumulator = new IdentifyAccumulator(REMOTE);
      accumulator.add(IdentifyCodec.parse(Unpooled.wrappedBuffer(input)));
      accumulator.result(false);
    }, BadPeerException.class);
  }
}
