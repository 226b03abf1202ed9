package io.relaypinner.relay.export;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relaypinner.ipfs.car.CarFormatException;
import io.relaypinner.ipfs.car.CarReader;
import io.relaypinner.ipfs.car.CarWriter;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.Multihash;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A CAR staged on disk answers like a blockstore and holds only its index in memory. */
class StagedCarTest {
  @TempDir
  Path dir;

  private static Cid raw(final byte[] data) {
    return Cid.v1(Multicodec.RAW, Multihash.sha2_256(data));
  }

  @Test
  void open_shouldFindEveryBlockFromTheFile_andHoldEightBytesPerBlock() throws Exception {
    final Random random = new Random(7);
    final List<Cid> cids = new ArrayList<>();
    final List<byte[]> blocks = new ArrayList<>();
    for (int i = 0; i < 2_000; i++) {
      final byte[] data = new byte[1 + random.nextInt(300)];
      random.nextBytes(data);
      cids.add(raw(data));
      blocks.add(data);
    }
    final byte[] inline = "inline".getBytes(StandardCharsets.UTF_8);
    final Cid identity = Cid.v1(Multicodec.RAW, Multihash.identity(inline));
    final ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (CarWriter writer = new CarWriter(out, List.of(cids.get(0)))) {
      for (int i = 0; i < cids.size(); i++) {
        writer.write(cids.get(i), blocks.get(i));
      }
      writer.write(identity, inline);
    }
    final Path file = dir.resolve("a.car");
    Files.write(file, out.toByteArray());

    // Any seed: a fixed one that makes every key collide in its high bits would still answer.
    for (final long seed : new long[] {0L, 42L, -1L}) {
      try (StagedCar car = StagedCar.open(file, CarReader.Limits.DEFAULT, seed)) {
        assertThat(car.roots()).containsExactly(cids.get(0));
        assertThat(car.blocks()).isEqualTo(2_000);
        for (int i = 0; i < cids.size(); i++) {
          assertThat(car.get(cids.get(i))).get().isEqualTo(blocks.get(i));
          // The same multihash under another codec is the same block.
          assertThat(car.has(Cid.v1(Multicodec.DAG_CBOR, cids.get(i).multihash()))).isTrue();
        }
        assertThat(car.get(identity)).get().isEqualTo(inline);
        assertThat(car.has(raw(new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9}))).isFalse();
        assertThat(car.heldBytes()).isLessThan(8L * 2_000 + 2 * 400);
        final Set<Cid> keys = new HashSet<>();
        car.forEachKey(keys::add);
        assertThat(keys).containsExactlyInAnyOrderElementsOf(cids);
      }
    }
  }

  @Test
  void open_shouldRefuseABlockThatDoesNotMatchItsCid() throws Exception {
    final byte[] data = "good".getBytes(StandardCharsets.UTF_8);
    final ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (CarWriter writer = new CarWriter(out, List.of(raw(data)))) {
      writer.write(raw(data), "evil".getBytes(StandardCharsets.UTF_8));
    }
    final Path file = dir.resolve("bad.car");
    Files.write(file, out.toByteArray());
    assertThatThrownBy(() -> StagedCar.open(file, CarReader.Limits.DEFAULT, 1L))
        .isInstanceOf(CarFormatException.class);
  }
}
