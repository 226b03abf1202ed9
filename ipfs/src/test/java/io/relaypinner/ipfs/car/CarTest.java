package io.relaypinner.ipfs.car;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.Multihash;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class CarTest {
  private static Cid raw(final byte[] data) {
    return Cid.v1(Multicodec.RAW, Multihash.sha2_256(data));
  }

  private static byte[] car(final List<Cid> roots, final byte[]... blocks) throws IOException {
    final ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (CarWriter writer = new CarWriter(out, roots)) {
      for (final byte[] block : blocks) {
        writer.write(raw(block), block);
      }
      assertThat(writer.written()).isEqualTo(out.size());
    }
    return out.toByteArray();
  }

  @Test
  void roundTripsRootsAndBlocksAndPredictsItsLength() throws IOException {
    final byte[] a = "alpha".getBytes(StandardCharsets.UTF_8);
    final byte[] b = new byte[300_000];
    final byte[] bytes = car(List.of(raw(a)), a, b);
    assertThat(bytes.length).isEqualTo(CarWriter.headerLength(List.of(raw(a)))
        + CarWriter.sectionLength(raw(a), a.length) + CarWriter.sectionLength(raw(b), b.length));
    final CarReader reader = new CarReader(new ByteArrayInputStream(bytes),
        CarReader.Limits.DEFAULT);
    assertThat(reader.roots()).containsExactly(raw(a));
    final List<CarBlock> read = new ArrayList<>();
    for (Optional<CarBlock> next = reader.next(); next.isPresent(); next = reader.next()) {
      read.add(next.get());
    }
    assertThat(read).extracting(CarBlock::cid).containsExactly(raw(a), raw(b));
    assertThat(read.get(1).data()).isEqualTo(b);
  }

  @Test
  void headerMatchesTheCarV1SpecEncoding() {
    // {"roots":[],"version":1}: a2 65 726f6f7473 80 67 76657273696f6e 01, prefixed by 0x11.
    assertThat(HexFormat.of().formatHex(CarWriter.header(List.of())))
        .isEqualTo("11a265726f6f7473806776657273696f6e01");
  }

  @Test
  void rejectsABlockThatDoesNotHashToItsCid() throws IOException {
    final byte[] bytes = car(List.of(), "good".getBytes(StandardCharsets.UTF_8));
    bytes[bytes.length - 1] ^= 1;
    final CarReader reader = new CarReader(new ByteArrayInputStream(bytes),
        CarReader.Limits.DEFAULT);
    assertThatThrownBy(reader::next).isInstanceOf(CarFormatException.class)
        .hasMessageContaining("does not hash");
  }

  @Test
  void rejectsTruncationOversizeHeadersAndTooManyBlocks() throws IOException {
    final byte[] bytes = car(List.of(), new byte[10], new byte[11]);
    final CarReader cut = new CarReader(
        new ByteArrayInputStream(java.util.Arrays.copyOf(bytes, bytes.length - 3)),
        CarReader.Limits.DEFAULT);
    cut.next();
    assertThatThrownBy(cut::next).isInstanceOf(CarFormatException.class)
        .hasMessageContaining("ends inside");
    assertThatThrownBy(() -> new CarReader(new ByteArrayInputStream(bytes),
        new CarReader.Limits(4, 1, 10, 1000))).isInstanceOf(CarFormatException.class)
        .hasMessageContaining("header");
    final CarReader few = new CarReader(new ByteArrayInputStream(bytes),
        new CarReader.Limits(1024, 1, 1, 1000));
    few.next();
    assertThatThrownBy(few::next).isInstanceOf(CarFormatException.class)
        .hasMessageContaining("more than 1 blocks");
    assertThatThrownBy(() -> new CarReader(new ByteArrayInputStream(new byte[] {0x05, 1, 2}),
        CarReader.Limits.DEFAULT)).isInstanceOf(CarFormatException.class);
  }

  @Test
  void rejectsAnOversizeSectionBeforeReadingIt() throws IOException {
    final byte[] header = CarWriter.header(List.of());
    final byte[] bytes = java.util.Arrays.copyOf(header, header.length + 4);
    // varint 0x0fffffff: far above a block's limit, nothing behind it.
    bytes[header.length] = (byte) 0xff;
    bytes[header.length + 1] = (byte) 0xff;
    bytes[header.length + 2] = (byte) 0xff;
    bytes[header.length + 3] = (byte) 0x7f;
    final CarReader reader = new CarReader(new ByteArrayInputStream(bytes),
        CarReader.Limits.DEFAULT);
    assertThatThrownBy(reader::next).isInstanceOf(CarFormatException.class)
        .hasMessageContaining("section of");
  }
}
