package io.relaypinner.ipfs.dagcbor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relaypinner.testkit.TestVectors;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class DagCborHostileInputTest {
  private static final HexFormat HEX = HexFormat.of();

  @ParameterizedTest
  @ValueSource(strings = {"map-with_complex_entries", "cid-arrayof", "dagpb_4namedlinks+data",
      "int--11959030306112471732", "string-Čaues ßvěte!", "float-82497.63712086187"})
  void decode_shouldThrowDagCborException_whenTruncatedAtAnyOffset(final String fixture)
      throws IOException {
    final byte[] bytes = fixtureBytes(fixture);
    assertThat(DagCbor.decode(bytes)).isNotNull();
    for (int len = 0; len < bytes.length; len++) {
      final byte[] prefix = Arrays.copyOf(bytes, len);
      assertThatThrownBy(() -> DagCbor.decode(prefix))
          .as("prefix of %d bytes", len).isInstanceOf(DagCborException.class);
      assertThatThrownBy(() -> DagCbor.validate(prefix)).isInstanceOf(DagCborException.class);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"9bffffffffffffffff", "9b7fffffffffffffff", "9affffffff",
      "bbffffffffffffffff", "baffffffff", "b90100", "5bffffffffffffffff", "5affffffff",
      "7affffffff", "7bffffffffffffffff", "d82a5affffffff", "990100f6", "8300"})
  void decode_shouldRejectBeforeAllocating_whenDeclaredLengthExceedsInput(final String hex) {
    assertThatThrownBy(() -> DagCbor.decode(HEX.parseHex(hex)))
        .isInstanceOf(DagCborException.class)
        .hasMessageMatching("(declared length .* exceeds the .* bytes left|truncated).*");
  }

  @Test
  void decode_shouldHitTheDepthLimit_whenTenThousandArraysNest() {
    final byte[] bytes = nestedArrays(10_000);
    assertThatThrownBy(() -> DagCbor.decode(bytes))
        .isInstanceOf(DagCborException.class).hasMessageContaining("nesting deeper than");
    assertThatThrownBy(() -> DagCbor.links(bytes)).isInstanceOf(DagCborException.class);
    final byte[] maps = nestedMaps(10_001);
    assertThatThrownBy(() -> DagCbor.decode(maps)).isInstanceOf(DagCborException.class);
  }

  @Test
  void decode_shouldAcceptNestingUpToTheLimit() {
    assertThat(DagCbor.decode(nestedArrays(64))).isNotNull();
    assertThatThrownBy(() -> DagCbor.decode(nestedArrays(65)))
        .isInstanceOf(DagCborException.class).hasMessageContaining("limit of 64");
    final DagCborDecoder deep =
        new DagCborDecoder(DagCborLimits.builder().maxDepth(256).build());
    final DagCborValue value = deep.decode(nestedArrays(256));
    assertThat(DagCbor.encode(value)).isEqualTo(nestedArrays(256));
    deep.validate(nestedMaps(256));
    assertThat(DagCbor.encode(deep.decode(nestedMaps(256)))).isEqualTo(nestedMaps(256));
  }

  @Test
  void encode_shouldRefuseNestingBeyondTheCeiling_withoutStackOverflow() {
    DagCborValue value = DagCborValue.nullValue();
    for (int i = 0; i < 5_000; i++) {
      value = DagCborValue.list(value);
    }
    final DagCborValue deep = value;
    assertThatThrownBy(() -> DagCbor.encode(deep))
        .isInstanceOf(DagCborException.class).hasMessageContaining("nesting deeper");
  }

  @Test
  void decode_shouldOnlyThrowDagCborException_forRandomBytes() {
    final Random random = new Random(20261122L);
    int accepted = 0;
    for (int i = 0; i < 50_000; i++) {
      final byte[] bytes = new byte[random.nextInt(48)];
      random.nextBytes(bytes);
      if (tryDecode(bytes)) {
        accepted++;
      }
    }
    // Some short inputs (single small ints, true, null...) are valid.
    assertThat(accepted).isPositive();
  }

  @Test
  void decode_shouldOnlyThrowDagCborException_forMutatedFixtures() throws IOException {
    final Path root = TestVectors.path("ipld-codec-fixtures/fixtures");
    final List<byte[]> blocks = new ArrayList<>();
    try (Stream<Path> folders = Files.list(root)) {
      for (final Path folder : folders.filter(Files::isDirectory).sorted().toList()) {
        try (Stream<Path> files = Files.list(folder)) {
          for (final Path f : files.filter(p -> p.toString().endsWith(".dag-cbor")).toList()) {
            blocks.add(Files.readAllBytes(f));
          }
        }
      }
    }
    final Random random = new Random(42L);
    for (int i = 0; i < 30_000; i++) {
      final byte[] bytes = blocks.get(random.nextInt(blocks.size())).clone();
      final int flips = 1 + random.nextInt(3);
      for (int k = 0; k < flips && bytes.length > 0; k++) {
        bytes[random.nextInt(bytes.length)] = (byte) random.nextInt(256);
      }
      tryDecode(bytes);
    }
  }

  /**
   * Decodes; anything accepted must be canonical, so it re-encodes to the same bytes, and the
   * streaming link walk must agree with the tree.
   */
  private static boolean tryDecode(final byte[] bytes) {
    final DagCborValue value;
    try {
      value = DagCbor.decode(bytes);
    } catch (final DagCborException e) {
      assertThatThrownBy(() -> DagCbor.validate(bytes)).isInstanceOf(DagCborException.class);
      return false;
    }
    assertThat(DagCbor.encode(value)).as(HEX.formatHex(bytes)).isEqualTo(bytes);
    assertThat(DagCbor.links(bytes)).isEqualTo(DagCborFixturesTest.treeLinks(value));
    return true;
  }

  private static byte[] nestedArrays(final int depth) {
    final byte[] bytes = new byte[depth + 1];
    Arrays.fill(bytes, 0, depth, (byte) 0x81);
    bytes[depth] = (byte) 0xf6;
    return bytes;
  }

  /** {@code {"": {"": ... null}}}, {@code depth} maps deep. */
  private static byte[] nestedMaps(final int depth) {
    final byte[] bytes = new byte[depth * 2 + 1];
    for (int i = 0; i < depth; i++) {
      bytes[2 * i] = (byte) 0xa1;
      bytes[2 * i + 1] = 0x60;
    }
    bytes[bytes.length - 1] = (byte) 0xf6;
    return bytes;
  }

  private static byte[] fixtureBytes(final String name) throws IOException {
    final Path folder = TestVectors.path("ipld-codec-fixtures/fixtures/" + name);
    try (Stream<Path> files = Files.list(folder)) {
      return Files.readAllBytes(files.filter(p -> p.toString().endsWith(".dag-cbor"))
          .findFirst().orElseThrow());
    }
  }
}
