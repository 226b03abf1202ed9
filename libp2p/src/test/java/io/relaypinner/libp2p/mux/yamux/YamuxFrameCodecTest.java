package io.relaypinner.libp2p.mux.yamux;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.relaypinner.libp2p.core.ProtocolViolationException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class YamuxFrameCodecTest {
  private static final HexFormat HEX = HexFormat.of();

  private static ByteBuf hex(final String hex) {
    return Unpooled.wrappedBuffer(HEX.parseHex(hex.replace(" ", "")));
  }

  private static EmbeddedChannel codec(final long maxData) {
    return new EmbeddedChannel(new YamuxFrameCodec(maxData));
  }

  /** Reads everything the codec emitted: frames as records, payload slices as hex strings. */
  private static List<Object> drain(final EmbeddedChannel channel) {
    final List<Object> out = new ArrayList<>();
    Object msg;
    while ((msg = channel.readInbound()) != null) {
      if (msg instanceof ByteBuf buf) {
        out.add(ByteBufUtil.hexDump(buf));
        buf.release();
      } else {
        out.add(msg);
      }
    }
    return out;
  }

  @ParameterizedTest
  @CsvSource({
    "00 00 0000 00000001 00000000, DATA, 0, 1, 0",
    "00 00 0001 00000003 00000000, DATA, 1, 3, 0",
    "00 01 0001 00000001 00000000, WINDOW_UPDATE, 1, 1, 0",
    "00 01 0002 00000002 00040000, WINDOW_UPDATE, 2, 2, 262144",
    "00 01 0004 00000005 00000000, WINDOW_UPDATE, 4, 5, 0",
    "00 01 0008 00000007 00000000, WINDOW_UPDATE, 8, 7, 0",
    "00 01 0006 ffffffff ffffffff, WINDOW_UPDATE, 6, -1, 4294967295",
    "00 02 0001 00000000 0000002a, PING, 1, 0, 42",
    "00 02 0002 00000000 ffffffff, PING, 2, 0, 4294967295",
    "00 03 0000 00000000 00000000, GO_AWAY, 0, 0, 0",
    "00 03 0000 00000000 00000001, GO_AWAY, 0, 0, 1",
    "00 03 0000 00000000 00000002, GO_AWAY, 0, 0, 2",
    "00 01 000f 00000009 00000010, WINDOW_UPDATE, 15, 9, 16"
  })
  void decode_shouldParseEveryTypeAndFlag_andEncodeBackByteExact(
      final String wire,
      final YamuxFrameType type,
      final int flags,
      final int streamId,
      final long length) {
    final EmbeddedChannel channel = codec(1 << 20);
    channel.writeInbound(hex(wire));
    final YamuxFrame expected = new YamuxFrame(type, flags, streamId, length);
    assertThat(drain(channel)).containsExactly(expected);

    final ByteBuf encoded = expected.encode(ByteBufAllocator.DEFAULT);
    assertThat(ByteBufUtil.hexDump(encoded)).isEqualTo(wire.replace(" ", ""));
    encoded.release();
    assertThat(channel.finishAndReleaseAll()).isFalse();
  }

  @Test
  void decode_shouldEmitHeaderThenPayloadSlice_whenDataFrameArrivesWhole() {
    final EmbeddedChannel channel = codec(1 << 20);
    final ByteBuf in = hex("00 00 0001 00000001 00000003 aabbcc");
    channel.writeInbound(in);
    assertThat(drain(channel)).containsExactly(YamuxFrame.data(1, 1, 3), "aabbcc");
    assertThat(in.refCnt()).isZero();
    assertThat(channel.finishAndReleaseAll()).isFalse();
  }

  @Test
  void decode_shouldReassembleHeader_whenSplitAcrossReadsByteByByte() {
    final EmbeddedChannel channel = codec(1 << 20);
    final byte[] wire = HEX.parseHex("000100020000000400000100" + "00020001000000000000002a");
    for (final byte b : wire) {
      channel.writeInbound(Unpooled.wrappedBuffer(new byte[] {b}));
    }
    assertThat(drain(channel))
        .containsExactly(YamuxFrame.windowUpdate(2, 4, 256), YamuxFrame.ping(1, 42));
    assertThat(channel.finishAndReleaseAll()).isFalse();
  }

  @Test
  void decode_shouldStreamPayloadAsItArrives_whenDataFrameSpansReads() {
    final EmbeddedChannel channel = codec(1 << 20);
    final ByteBuf first = hex("00 00 0000 00000001 00000005 0102");
    channel.writeInbound(first);
    assertThat(drain(channel)).containsExactly(YamuxFrame.data(0, 1, 5), "0102");
    // The rest of the payload, then a header split in two, in one read.
    channel.writeInbound(hex("030405 000100040000"));
    assertThat(drain(channel)).containsExactly("030405");
    channel.writeInbound(hex("000100000000"));
    assertThat(drain(channel)).containsExactly(YamuxFrame.windowUpdate(4, 1, 0));
    assertThat(first.refCnt()).isZero();
    assertThat(channel.finishAndReleaseAll()).isFalse();
  }

  @Test
  void decode_shouldEmitAllFrames_whenSeveralArriveInOneRead() {
    final EmbeddedChannel channel = codec(1 << 20);
    channel.writeInbound(
        hex(
            "00 01 0001 00000001 00000000"
                + "00 00 0000 00000001 00000002 abcd"
                + "00 00 0004 00000001 00000000"
                + "00 02 0001 00000000 00000007"
                + "00 03 0000 00000000 00000000"));
    assertThat(drain(channel))
        .containsExactly(
            YamuxFrame.windowUpdate(1, 1, 0),
            YamuxFrame.data(0, 1, 2),
            "abcd",
            YamuxFrame.data(4, 1, 0),
            YamuxFrame.ping(1, 7),
            YamuxFrame.goAway(0));
    assertThat(channel.finishAndReleaseAll()).isFalse();
  }

  @Test
  void decode_shouldRejectUnknownVersion_andDropEverythingAfter() {
    final EmbeddedChannel channel = codec(1 << 20);
    assertThatThrownBy(() -> channel.writeInbound(hex("01 00 0000 00000001 00000000")))
        .isInstanceOf(ProtocolViolationException.class)
        .hasMessageContaining("version 1");
    final ByteBuf after = hex("00 02 0001 00000000 00000001");
    channel.writeInbound(after);
    assertThat(drain(channel)).isEmpty();
    assertThat(after.refCnt()).isZero();
    assertThat(channel.finishAndReleaseAll()).isFalse();
  }

  @Test
  void decode_shouldRejectUnknownType() {
    final EmbeddedChannel channel = codec(1 << 20);
    assertThatThrownBy(() -> channel.writeInbound(hex("00 04 0000 00000000 00000000")))
        .isInstanceOf(ProtocolViolationException.class)
        .hasMessageContaining("type 4");
    assertThat(channel.finishAndReleaseAll()).isFalse();
  }

  @Test
  void decode_shouldRejectOversizeData_onTheHeaderBeforeAnyPayload() {
    final EmbeddedChannel channel = codec(1024);
    assertThatThrownBy(() -> channel.writeInbound(hex("00 00 0000 00000001 00000401")))
        .isInstanceOf(ProtocolViolationException.class)
        .hasMessageContaining("1025 bytes exceeds 1024");
    assertThat(channel.finishAndReleaseAll()).isFalse();

    // A length field of 2^32-1 is fine for other types; only DATA carries payload.
    final EmbeddedChannel other = codec(1024);
    other.writeInbound(hex("00 01 0000 00000001 ffffffff"));
    assertThat(drain(other)).containsExactly(YamuxFrame.windowUpdate(0, 1, 0xFFFF_FFFFL));
    assertThat(other.finishAndReleaseAll()).isFalse();
  }

  @Test
  void frame_shouldRejectOutOfRangeFields_andPrintFlags() {
    assertThatThrownBy(() -> YamuxFrame.data(0x10000, 1, 0))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> YamuxFrame.data(0, 1, 1L << 32))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(YamuxFrame.windowUpdate(YamuxFrame.FLAG_SYN | YamuxFrame.FLAG_FIN, -2, 5))
        .hasToString("WINDOW_UPDATE(SYN|FIN) stream=4294967294 length=5");
    assertThat(YamuxFrameType.fromCode(4)).isNull();
    assertThat(YamuxFrameType.fromCode(-1)).isNull();
  }
}
