package io.relaypinner.libp2p.multistream;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.relaypinner.libp2p.core.ProtocolViolationException;
import io.relaypinner.testkit.FuzzCheck;

/** Jazzer: multistream-select messages as the remote sends them, read until one is incomplete. */
class MultistreamFuzzer {
  @FuzzTest
  void read(final byte[] input) throws Exception {
    final ByteBuf in = Unpooled.wrappedBuffer(input);
    FuzzCheck.accepts(() -> {
      for (int i = 0; i < 64 && MultistreamCodec.readMessage(in,
          MultistreamProtocol.MAX_MESSAGE_LENGTH) != null; i++) {
        // read the next
      }
    }, ProtocolViolationException.class);
  }
}
