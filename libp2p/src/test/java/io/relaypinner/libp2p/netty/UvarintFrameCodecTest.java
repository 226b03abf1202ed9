package io.relaypinner.libp2p.netty;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.DecoderException;
import io.relaypinner.libp2p.core.ProtocolViolationException;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

class UvarintFrameCodecTest {
  private static ByteBuf hex(final String hex) {
    return Unpooled.wrappedBuffer(HexFormat.of().parseHex(hex));
  }

  private static String readHex(final EmbeddedChannel channel) {
    final ByteBuf frame = channel.readInbound();
    try {
      return ByteBufUtil.hexDump(frame);
    } finally {
      frame.release();
    }
  }

  @Test
  void decode_shouldEmitFrames_whenPrefixAndPayloadArriveInPieces() {
    final EmbeddedChannel channel = new EmbeddedChannel(new UvarintFrameDecoder(1024));
    channel.writeInbound(hex("03aa"));
    final Object nothing = channel.readInbound();
    assertThat(nothing).isNull();
    channel.writeInbound(hex("bbcc02dd"));
    assertThat(readHex(channel)).isEqualTo("aabbcc");
    channel.writeInbound(hex("ee0080"));
    assertThat(readHex(channel)).isEqualTo("ddee");
    assertThat(readHex(channel)).isEmpty();
    // 0x80 then 0x01 = 128: a prefix split across reads, then the payload in two pieces
    channel.writeInbound(hex("01"));
    channel.writeInbound(hex("ff"));
    channel.writeInbound(Unpooled.wrappedBuffer(new byte[127]));
    assertThat(readHex(channel)).hasSize(256);
    assertThat(channel.finishAndReleaseAll()).isFalse();
  }

  @Test
  void decode_shouldRejectFrameLargerThanLimit_beforeBuffering() {
    final EmbeddedChannel channel = new EmbeddedChannel(new UvarintFrameDecoder(16));
    assertThatThrownBy(() -> channel.writeInbound(hex("11")))
        .isInstanceOf(DecoderException.class)
        .hasCauseInstanceOf(ProtocolViolationException.class)
        .hasMessageContaining("exceeds the limit of 16");
    channel.finishAndReleaseAll();
  }

  @Test
  void decode_shouldRejectOverlongAndNonMinimalPrefixes() {
    final EmbeddedChannel overlong = new EmbeddedChannel(new UvarintFrameDecoder(16));
    assertThatThrownBy(() -> overlong.writeInbound(hex("80808080808080808001")))
        .hasCauseInstanceOf(ProtocolViolationException.class);
    overlong.finishAndReleaseAll();
    final EmbeddedChannel nonMinimal = new EmbeddedChannel(new UvarintFrameDecoder(16));
    assertThatThrownBy(() -> nonMinimal.writeInbound(hex("8100")))
        .hasCauseInstanceOf(ProtocolViolationException.class);
    nonMinimal.finishAndReleaseAll();
  }

  @Test
  void encode_shouldPrefixLength_withoutCopyingPayload() {
    final EmbeddedChannel channel = new EmbeddedChannel(UvarintFrameEncoder.INSTANCE);
    final ByteBuf payload = Unpooled.wrappedBuffer(new byte[300]);
    channel.writeOutbound(payload);
    final ByteBuf prefix = channel.readOutbound();
    assertThat(ByteBufUtil.hexDump(prefix)).isEqualTo("ac02");
    prefix.release();
    final ByteBuf body = channel.readOutbound();
    assertThat(body.readableBytes()).isEqualTo(300);
    body.release();
    assertThat(channel.finishAndReleaseAll()).isFalse();
  }
}
