package io.relaypinner.ipfs.bitswap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.relaypinner.ipfs.bitswap.BitswapFrame.Block;
import io.relaypinner.ipfs.bitswap.BitswapFrame.Presence;
import io.relaypinner.ipfs.bitswap.BitswapFrame.Want;
import io.relaypinner.ipfs.bitswap.BitswapFrame.WantType;
import io.relaypinner.ipfs.bitswap.pb.BitswapProtos.Message;
import io.relaypinner.ipfs.blockstore.Blocks;
import io.relaypinner.libp2p.core.ProtocolViolationException;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.Multihash;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class BitswapFrameCodecTest {
  private final BitswapFrameCodec codec = new BitswapFrameCodec(BitswapConfig.DEFAULT);

  private static byte[] bytes(final String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  private static Cid rawCid(final byte[] data) {
    return Cid.v1(Multicodec.RAW, Multihash.sha2_256(data));
  }

  @Test
  void encodeDecode_shouldRoundTripEveryField_whenVersion12() {
    final byte[] a = bytes("block a");
    final byte[] b = bytes("block b");
    final Cid cidB = Cid.v0(Multihash.sha2_256(b));
    final BitswapFrame frame = new BitswapFrame(
        List.of(Want.block(rawCid(a), true), Want.have(cidB, false), Want.cancel(rawCid(b))),
        true, List.of(new Block(rawCid(a), a), new Block(cidB, b)),
        List.of(new Presence(rawCid(a), true), new Presence(cidB, false)), 42);

    final BitswapFrameCodec.Decoded decoded =
        codec.decode(codec.encode(frame, BitswapProtocol.Version.V1_2));

    assertThat(decoded.rejectedBlocks()).isZero();
    final BitswapFrame back = decoded.frame();
    assertThat(back.wants()).isEqualTo(frame.wants());
    assertThat(back.full()).isTrue();
    assertThat(back.presences()).isEqualTo(frame.presences());
    assertThat(back.pendingBytes()).isEqualTo(42);
    assertThat(back.blocks()).hasSize(2);
    assertThat(back.blocks().get(0).cid()).isEqualTo(rawCid(a));
    assertThat(back.blocks().get(0).data()).isEqualTo(a);
    assertThat(back.blocks().get(1).cid()).isEqualTo(cidB);
  }

  @Test
  void encode_shouldUseBareBlocksAndNoPresences_whenVersion10() throws Exception {
    final byte[] v0 = bytes("dag-pb-ish");
    final byte[] raw = bytes("raw");
    final Cid cidV0 = Cid.v0(Multihash.sha2_256(v0));
    final BitswapFrame frame = new BitswapFrame(List.of(Want.have(cidV0, true)), false,
        List.of(new Block(cidV0, v0), new Block(rawCid(raw), raw)),
        List.of(new Presence(cidV0, true)), 0);

    final Message message = Message.parseFrom(codec.encode(frame, BitswapProtocol.Version.V1_0));

    assertThat(message.getBlocksCount()).isEqualTo(1);
    assertThat(message.getPayloadCount()).isZero();
    assertThat(message.getBlockPresencesCount()).isZero();
    assertThat(message.getWantlist().getEntries(0).getWantType())
        .isEqualTo(Message.Wantlist.WantType.Block);
    final BitswapFrame back = codec.decode(message.toByteArray()).frame();
    assertThat(back.blocks()).containsExactly(back.blocks().get(0));
    assertThat(back.blocks().get(0).cid()).isEqualTo(cidV0);
    assertThat(back.wants().get(0).type()).isEqualTo(WantType.BLOCK);
  }

  @Test
  void decode_shouldRejectOnlyThatBlock_whenHashFunctionUnsupported() {
    final byte[] good = bytes("good");
    final Message message = Message.newBuilder()
        .addPayload(Message.Block.newBuilder()
            // CIDv1 raw with a blake2b-256 (0xb220) hash we cannot check.
            .setPrefix(ByteString.copyFrom(new byte[] {1, 0x55, (byte) 0xa0, (byte) 0xe4, 2,
                32}))
            .setData(ByteString.copyFrom(bytes("unverifiable"))))
        .addPayload(Message.Block.newBuilder()
            .setPrefix(ByteString.copyFrom(BitswapFrameCodec.prefixBytes(rawCid(good))))
            .setData(ByteString.copyFrom(good)))
        .build();

    final BitswapFrameCodec.Decoded decoded = codec.decode(message.toByteArray());

    assertThat(decoded.rejectedBlocks()).isEqualTo(1);
    assertThat(decoded.frame().blocks()).hasSize(1);
    assertThat(decoded.frame().blocks().get(0).cid()).isEqualTo(rawCid(good));
  }

  @Test
  void decode_shouldYieldTheCidOfTheBytes_whenBlockIsNotTheOneNamedElsewhere() {
    // A block's CID is computed from its bytes and prefix: a peer cannot make us store bytes
    // under a CID they do not hash to. The want matching happens by that computed CID.
    final byte[] data = bytes("payload");
    final Cid claimed = rawCid(bytes("something else"));
    final Message message = Message.newBuilder()
        .addPayload(Message.Block.newBuilder()
            .setPrefix(ByteString.copyFrom(BitswapFrameCodec.prefixBytes(claimed)))
            .setData(ByteString.copyFrom(data)))
        .build();

    final Block block = codec.decode(message.toByteArray()).frame().blocks().get(0);

    assertThat(block.cid()).isNotEqualTo(claimed).isEqualTo(rawCid(data));
  }

  @Test
  void decode_shouldThrow_whenTruncated() {
    final byte[] data = bytes("truncate me");
    final byte[] full = codec.encode(new BitswapFrame(List.of(Want.block(rawCid(data), true)),
        false, List.of(new Block(rawCid(data), data)), List.of(), 0),
        BitswapProtocol.Version.V1_2);

    for (int cut = 1; cut < full.length; cut++) {
      final byte[] truncated = Arrays.copyOf(full, cut);
      try {
        codec.decode(truncated);
      } catch (final ProtocolViolationException expected) {
        continue;
      }
      // A cut at a field boundary can still parse; it must then be a consistent, smaller frame.
      assertThat(codec.decode(truncated).frame().blocks()).hasSizeLessThanOrEqualTo(1);
    }
    assertThatThrownBy(() -> codec.decode(Arrays.copyOf(full, full.length - 1)))
        .isInstanceOf(ProtocolViolationException.class);
  }

  @Test
  void decode_shouldThrow_whenOverMessageSize() {
    final BitswapFrameCodec small = new BitswapFrameCodec(
        BitswapConfig.builder().maxMessageSize(2048).build());

    assertThatThrownBy(() -> small.decode(new byte[2049]))
        .isInstanceOf(ProtocolViolationException.class).hasMessageContaining("exceeds");
  }

  @Test
  void decode_shouldThrow_whenTooManyWantlistEntries() {
    final Message.Wantlist.Builder wantlist = Message.Wantlist.newBuilder();
    final ByteString cid = ByteString.copyFrom(rawCid(bytes("x")).bytes());
    for (int i = 0; i <= BitswapConfig.DEFAULT.maxWantlistEntries(); i++) {
      wantlist.addEntries(Message.Wantlist.Entry.newBuilder().setBlock(cid));
    }
    final byte[] body = Message.newBuilder().setWantlist(wantlist).build().toByteArray();

    assertThatThrownBy(() -> codec.decode(body))
        .isInstanceOf(ProtocolViolationException.class).hasMessageContaining("wantlist entries");
  }

  @Test
  void decode_shouldThrow_whenTooManyBlocks() {
    final Message.Builder message = Message.newBuilder();
    for (int i = 0; i <= BitswapConfig.DEFAULT.maxBlocksPerMessage(); i++) {
      message.addBlocks(ByteString.copyFrom(new byte[] {(byte) i}));
    }
    final byte[] body = message.build().toByteArray();

    assertThatThrownBy(() -> codec.decode(body))
        .isInstanceOf(ProtocolViolationException.class).hasMessageContaining("blocks exceed");
  }

  @Test
  void decode_shouldThrow_whenBlockOverMaxBlockSize() {
    final byte[] body = Message.newBuilder()
        .addBlocks(ByteString.copyFrom(new byte[Blocks.MAX_BLOCK_SIZE + 1])).build().toByteArray();

    assertThatThrownBy(() -> codec.decode(body))
        .isInstanceOf(ProtocolViolationException.class).hasMessageContaining("block of");
  }

  @Test
  void decode_shouldThrow_whenWantlistCidIsGarbage() {
    final byte[] body = Message.newBuilder().setWantlist(Message.Wantlist.newBuilder()
        .addEntries(Message.Wantlist.Entry.newBuilder()
            .setBlock(ByteString.copyFrom(new byte[] {1, 2, 3})))).build().toByteArray();

    assertThatThrownBy(() -> codec.decode(body))
        .isInstanceOf(ProtocolViolationException.class).hasMessageContaining("bad CID");
  }

  @Test
  void decode_shouldThrow_whenPrefixIsInvalid() {
    final byte[] body = Message.newBuilder().addPayload(Message.Block.newBuilder()
        .setPrefix(ByteString.copyFrom(new byte[] {0, 0x55, 0x12, 32}))
        .setData(ByteString.copyFrom(bytes("v0 must be dag-pb")))).build().toByteArray();

    assertThatThrownBy(() -> codec.decode(body))
        .isInstanceOf(ProtocolViolationException.class).hasMessageContaining("prefix");
  }

  @Test
  void decode_shouldNeverThrowAnythingElse_whenRandomBytes() {
    final Random random = new Random(7);
    int violations = 0;
    for (int i = 0; i < 5_000; i++) {
      final byte[] garbage = new byte[1 + random.nextInt(300)];
      random.nextBytes(garbage);
      try {
        final BitswapFrame frame = codec.decode(garbage).frame();
        for (final Block block : frame.blocks()) {
          assertThat(block.cid().multihash().verify(block.data())).isTrue();
        }
      } catch (final ProtocolViolationException expected) {
        violations++;
      }
    }
    assertThat(violations).isGreaterThan(0);
  }
}
