package io.relaypinner.multiformats;

import static io.relaypinner.multiformats.TestData.hex;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.BufferOverflowException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class UvarintTest {
  @Test
  void encodeAndDecode_shouldMatchSpecExamples_whenReadmeVectors() {
    int rows = 0;
    for (final String line : TestData.lines("varint/readme-examples.txt")) {
      if (line.isBlank() || line.startsWith("#")) {
        continue;
      }
      final String[] parts = line.split(",");
      final long value = Long.parseLong(parts[0].trim());
      final byte[] encoded = hex(parts[1].trim());
      assertThat(Uvarint.encode(value)).as("encode %d", value).isEqualTo(encoded);
      assertThat(Uvarint.size(value)).isEqualTo(encoded.length);
      assertThat(Uvarint.decode(encoded)).isEqualTo(new Uvarint.Decoded(value, encoded.length));
      rows++;
    }
    assertThat(rows).isEqualTo(6);
  }

  @Test
  void roundTrip_shouldPreserveValue_whenBoundaryValues() {
    final List<Long> values = new ArrayList<>();
    for (int bits = 0; bits < 63; bits++) {
      values.add(1L << bits);
      values.add((1L << bits) - 1);
      values.add((1L << bits) + 1);
    }
    values.add(Long.MAX_VALUE);
    for (final long v : values) {
      final byte[] enc = Uvarint.encode(v);
      assertThat(enc.length).isBetween(1, Uvarint.MAX_BYTES);
      assertThat(Uvarint.size(v)).isEqualTo(enc.length);
      final byte[] padded = new byte[enc.length + 3];
      System.arraycopy(enc, 0, padded, 2, enc.length);
      assertThat(Uvarint.read(padded, 2, padded.length)).isEqualTo(v);
      assertThat(Uvarint.decode(padded, 2)).isEqualTo(new Uvarint.Decoded(v, enc.length));
    }
  }

  @Test
  void size_shouldBeNineBytes_whenMaxValue() {
    assertThat(Uvarint.size(0)).isEqualTo(1);
    assertThat(Uvarint.size(127)).isEqualTo(1);
    assertThat(Uvarint.size(128)).isEqualTo(2);
    assertThat(Uvarint.size(Long.MAX_VALUE)).isEqualTo(9);
    assertThat(hex(Uvarint.encode(Long.MAX_VALUE))).isEqualTo("ffffffffffffffff7f");
  }

  @Test
  void encode_shouldReject_whenNegative() {
    assertThatThrownBy(() -> Uvarint.encode(-1))
        .isInstanceOf(MultiformatException.class)
        .hasMessageContaining("exceeds 2^63-1");
  }

  @Test
  void write_shouldWriteAtOffset_whenRoomInArray() {
    final byte[] dst = new byte[6];
    assertThat(Uvarint.write(300, dst, 3)).isEqualTo(2);
    assertThat(hex(dst)).isEqualTo("000000ac0200");
    assertThatThrownBy(() -> Uvarint.write(300, dst, 5))
        .isInstanceOf(IndexOutOfBoundsException.class);
  }

  @Test
  void decode_shouldRejectOverlongVarint_whenTenBytes() {
    final byte[] ten = hex("ffffffffffffffffff01");
    assertThatThrownBy(() -> Uvarint.decode(ten))
        .isInstanceOf(MultiformatException.class)
        .hasMessage("varint longer than 9 bytes at offset 0");
  }

  @Test
  void decode_shouldRejectOverlongVarint_whenNinthByteContinues() {
    final byte[] input = hex("0000808080808080808080");
    assertThatThrownBy(() -> Uvarint.decode(input, 2))
        .isInstanceOf(MultiformatException.class)
        .hasMessage("varint longer than 9 bytes at offset 2");
    assertThatThrownBy(() -> Uvarint.tryRead(input, 2, input.length))
        .isInstanceOf(MultiformatException.class);
  }

  @Test
  void decode_shouldRejectNonMinimal_whenTrailingZeroByte() {
    for (final String h : new String[] {"8000", "8100", "ff8000", "808080808080808000"}) {
      assertThatThrownBy(() -> Uvarint.decode(hex(h)))
          .as(h)
          .isInstanceOf(MultiformatException.class)
          .hasMessageContaining("non-minimal varint at offset 0");
    }
  }

  @Test
  void decode_shouldRejectTruncated_whenContinuationAtEnd() {
    assertThatThrownBy(() -> Uvarint.decode(hex("ff")))
        .isInstanceOf(MultiformatException.class)
        .hasMessageContaining("truncated varint at offset 0");
    assertThatThrownBy(() -> Uvarint.decode(new byte[0]))
        .isInstanceOf(MultiformatException.class)
        .hasMessageContaining("truncated varint");
    assertThatThrownBy(() -> Uvarint.read(hex("01ac02"), 1, 2))
        .isInstanceOf(MultiformatException.class)
        .hasMessageContaining("truncated varint at offset 1");
  }

  @Test
  void tryRead_shouldReturnIncomplete_whenRegionEndsInsideVarint() {
    final byte[] input = hex("ac02");
    assertThat(Uvarint.tryRead(input, 0, 1)).isEqualTo(Uvarint.INCOMPLETE);
    assertThat(Uvarint.tryRead(input, 0, 0)).isEqualTo(Uvarint.INCOMPLETE);
    assertThat(Uvarint.tryRead(input, 0, 2)).isEqualTo(300);
  }

  @Test
  void byteBuffer_shouldAdvancePosition_whenReadSucceeds() {
    final ByteBuffer buf = ByteBuffer.wrap(hex("ac02017f"));
    assertThat(Uvarint.read(buf)).isEqualTo(300);
    assertThat(buf.position()).isEqualTo(2);
    assertThat(Uvarint.tryRead(buf)).isEqualTo(1);
    assertThat(Uvarint.read(buf)).isEqualTo(127);
    assertThat(buf.hasRemaining()).isFalse();
  }

  @Test
  void byteBuffer_shouldKeepPosition_whenIncompleteOrInvalid() {
    final ByteBuffer partial = ByteBuffer.wrap(hex("0080"));
    partial.position(1);
    assertThat(Uvarint.tryRead(partial)).isEqualTo(Uvarint.INCOMPLETE);
    assertThat(partial.position()).isEqualTo(1);
    assertThatThrownBy(() -> Uvarint.read(partial))
        .isInstanceOf(MultiformatException.class)
        .hasMessageContaining("truncated varint at offset 1");
    assertThat(partial.position()).isEqualTo(1);
    final ByteBuffer bad = ByteBuffer.wrap(hex("8000"));
    assertThatThrownBy(() -> Uvarint.read(bad)).isInstanceOf(MultiformatException.class);
    assertThat(bad.position()).isZero();
  }

  @Test
  void byteBuffer_shouldWriteAndRefuseOverflow_whenFull() {
    final ByteBuffer buf = ByteBuffer.allocate(3);
    Uvarint.write(16384, buf);
    assertThat(hex(buf.array())).isEqualTo("808001");
    final ByteBuffer small = ByteBuffer.allocate(1);
    assertThatThrownBy(() -> Uvarint.write(300, small))
        .isInstanceOf(BufferOverflowException.class);
    assertThat(small.position()).isZero();
  }
}
