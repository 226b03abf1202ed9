package io.relaypinner.libp2p.netty;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.DecoderException;
import io.relaypinner.libp2p.core.ProtocolViolationException;

/** Jazzer: length-prefixed frames (identify, gossipsub, bitswap streams). */
class UvarintFrameFuzzer {
  @FuzzTest
  void decode(final byte[] input) {
    final EmbeddedChannel channel = new EmbeddedChannel(new UvarintFrameDecoder(4096));
    try {
      channel.writeInbound(Unpooled.wrappedBuffer(input));
    } catch (final DecoderException e) {
      if (!(e.getCause() instanceof ProtocolViolationException)) {
        throw e;
      }
    } catch (final ProtocolViolationException e) {
      // refused
    } finally {
      channel.finishAndReleaseAll();
    }
  }
}
