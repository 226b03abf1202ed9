package io.relaypinner.libp2p.multistream;

import static io.relaypinner.libp2p.multistream.MultistreamTestSupport.HEADER;
import static io.relaypinner.libp2p.multistream.MultistreamTestSupport.NOISE;
import static io.relaypinner.libp2p.multistream.MultistreamTestSupport.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.relaypinner.libp2p.core.ProtocolViolationException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class MultistreamCodecTest {
  @Test
  void writeMessage_shouldMatchSpecExample_whenNa() {
    final ByteBuf out = Unpooled.buffer();
    MultistreamCodec.writeMessage(out, "na");
    // libp2p/specs connections/README.md: "na" is 0x036e610a.
    assertThat(ByteBufUtil.hexDump(out)).isEqualTo("036e610a");
    out.release();
  }

  @Test
  void encode_shouldConcatenateMessages_whenHeaderAndProposal() {
    final ByteBuf out = MultistreamCodec.encode(ByteBufAllocator.DEFAULT,
        MultistreamProtocol.PROTOCOL_ID, "/noise");
    assertThat(ByteBufUtil.hexDump(out)).isEqualTo(HEADER + NOISE);
    out.release();
  }

  @Test
  void writeMessage_shouldUseTwoBytePrefix_whenMessageLongerThan127() {
    final ByteBuf out = Unpooled.buffer();
    MultistreamCodec.writeMessage(out, "/" + "a".repeat(199));
    assertThat(ByteBufUtil.hexDump(out, 0, 3)).isEqualTo("c9012f");
    assertThat(out.readableBytes()).isEqualTo(203);
    out.release();
  }

  @Test
  void readMessage_shouldTakeOneMessageAndLeaveRest_whenSeveralBuffered() {
    final ByteBuf in = bytes(HEADER + NOISE + "ff");
    assertThat(MultistreamCodec.readMessage(in, 1024)).isEqualTo("/multistream/1.0.0");
    assertThat(MultistreamCodec.readMessage(in, 1024)).isEqualTo("/noise");
    assertThat(ByteBufUtil.hexDump(in)).isEqualTo("ff");
    in.release();
  }

  @Test
  void readMessage_shouldReturnNullAndConsumeNothing_whenIncomplete() {
    for (final String partial : new String[] {"", "13", "132f6d75", "c8", "c801"}) {
      final ByteBuf in = bytes(partial);
      assertThat(MultistreamCodec.readMessage(in, 1024)).as(partial).isNull();
      assertThat(in.readerIndex()).isZero();
      in.release();
    }
  }

  @Test
  void readMessage_shouldKeepUnicode_whenProtocolIdIsUtf8() {
    final ByteBuf in = Unpooled.buffer();
    MultistreamCodec.writeMessage(in, "/ünï/1.0.0");
    assertThat(MultistreamCodec.readMessage(in, 1024)).isEqualTo("/ünï/1.0.0");
    in.release();
  }

  @Test
  void readMessage_shouldThrow_whenMalformed() {
    final String[] bad = {
      "00", // empty
      "036e6120", // no newline
      "8008", // 1024 accepted below; 1025 is not
      "8108",
      "ffff", // prefix longer than 1024 needs
      "8000", // non-minimal
      "03c30a0a", // "\xc3\n" is not UTF-8
    };
    for (final String hex : bad) {
      final ByteBuf in = bytes(hex);
      if (hex.equals("8008")) {
        assertThat(MultistreamCodec.readMessage(in, 1024)).isNull();
      } else {
        assertThatThrownBy(() -> MultistreamCodec.readMessage(in, 1024))
            .as(hex)
            .isInstanceOf(ProtocolViolationException.class);
      }
      in.release();
    }
  }

  @Test
  void readMessage_shouldApplyConfiguredLimit_whenSmallerThanSpec() {
    final ByteBuf in = bytes("152f" + "61".repeat(19) + "0a");
    assertThatThrownBy(() -> MultistreamCodec.readMessage(in, 20))
        .isInstanceOf(ProtocolViolationException.class)
        .hasMessageContaining("21 bytes exceeds 20");
    in.release();
  }

  @Test
  void writeLs_shouldWriteNestedList_whenProtocolsGiven() {
    final ByteBuf out = Unpooled.buffer();
    MultistreamCodec.writeLs(out, List.of("/noise"));
    assertThat(ByteBufUtil.hexDump(out)).isEqualTo("09" + NOISE + "0a");
    out.release();
  }

  @Test
  void writeLs_shouldStayWithin1024Bytes_whenListIsLong() {
    final List<String> many = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      many.add("/orbitdb/heads/orbitdb/zdpu" + i);
    }
    final ByteBuf out = Unpooled.buffer();
    MultistreamCodec.writeLs(out, many);
    final String body = MultistreamCodec.readMessage(out, 1024);
    assertThat(body).startsWith("\u001d/orbitdb/heads/orbitdb/zdpu0\n");
    assertThat(out.isReadable()).isFalse();
    out.release();
  }
}
