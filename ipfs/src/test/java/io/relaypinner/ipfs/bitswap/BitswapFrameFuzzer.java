package io.relaypinner.ipfs.bitswap;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.relaypinner.libp2p.core.ProtocolViolationException;
import io.relaypinner.testkit.FuzzCheck;
import java.nio.ByteBuffer;

/** Jazzer: a bitswap message body (wantlist, blocks with prefixes, presences). */
class BitswapFrameFuzzer {
  private static final BitswapFrameCodec CODEC = new BitswapFrameCodec(BitswapConfig.DEFAULT);

  @FuzzTest
  void decode(final byte[] input) throws Exception {
    FuzzCheck.accepts(() -> CODEC.decode(ByteBuffer.wrap(input)),
        ProtocolViolationException.class);
  }
}
