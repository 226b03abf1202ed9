package io.relaypinner.libp2p.transport.quic;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import org.junit.jupiter.api.Test;

class QuicDatagramFilterTest {
  private static final SecureRandom RANDOM = new SecureRandom();
  private final SignedConnectionIds ids = new SignedConnectionIds(RANDOM);
  private int dropped;
  private final QuicDatagramFilter filter = new QuicDatagramFilter(ids, () -> dropped++);

  private static ByteBuf random(final int length) {
    final byte[] bytes = new byte[length];
    RANDOM.nextBytes(bytes);
    return Unpooled.wrappedBuffer(bytes);
  }

  @Test
  void acceptable_shouldRefuseRandomDatagrams() {
    int accepted = 0;
    for (int i = 0; i < 10_000; i++) {
      if (filter.acceptable(random(1 + RANDOM.nextInt(1400)))) {
        accepted++;
      }
    }
    // Only a long header with version 1 by chance could pass: about 1 in 2^34.
    assertThat(accepted).isZero();
  }

  @Test
  void acceptable_shouldPassShortHeaders_onlyForIdsItIssued() {
    final ByteBuffer id = ids.newId(SignedConnectionIds.LENGTH);
    final ByteBuf ours = Unpooled.buffer().writeByte(0x40).writeBytes(id.duplicate())
        .writeBytes(new byte[40]);
    final ByteBuf forged = Unpooled.buffer().writeByte(0x40).writeBytes(random(20))
        .writeBytes(new byte[40]);

    assertThat(filter.acceptable(ours)).isTrue();
    assertThat(filter.acceptable(forged)).isFalse();
  }

  @Test
  void newId_shouldBeIdempotent_andVerifiable() {
    final ByteBuffer input = ByteBuffer.wrap(new byte[] {1, 2, 3, 4, 5, 6, 7, 8});
    final ByteBuffer one = ids.newId(input, SignedConnectionIds.LENGTH);
    final ByteBuffer two = ids.newId(input, SignedConnectionIds.LENGTH);

    assertThat(one).isEqualTo(two);
    assertThat(input.position()).isZero();
    assertThat(ids.isOurs(Unpooled.wrappedBuffer(one.duplicate()), 0)).isTrue();
  }

  @Test
  void acceptable_shouldPassV1Initials_ofAtLeast1200Bytes() {
    final ByteBuf initial = Unpooled.buffer().writeByte(0xC0).writeInt(1).writeByte(8)
        .writeBytes(random(8)).writeByte(0).writeBytes(new byte[1200]);
    final ByteBuf shortInitial = Unpooled.buffer().writeByte(0xC0).writeInt(1).writeByte(8)
        .writeBytes(random(8)).writeByte(0).writeBytes(new byte[100]);
    final ByteBuf draft29 = Unpooled.buffer().writeByte(0xC0).writeInt(0xff00001d).writeByte(8)
        .writeBytes(random(8)).writeByte(0).writeBytes(new byte[1200]);

    assertThat(filter.acceptable(initial)).isTrue();
    assertThat(filter.acceptable(shortInitial)).isFalse();
    assertThat(filter.acceptable(draft29)).isFalse();
  }
}
