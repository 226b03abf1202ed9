package io.relaypinner.ipfs.dagcbor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.Multihash;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class DagCborEncoderTest {
  private static final HexFormat HEX = HexFormat.of();

  @Test
  void encode_shouldSortKeysByLengthThenBytes_whenMapIsBuiltInAnyOrder() {
    final Cid cid =
        Cid.v1(Multicodec.RAW, Multihash.sha2_256("x".getBytes(StandardCharsets.UTF_8)));
    final LinkedHashMap<String, DagCborValue> entries = new LinkedHashMap<>();
    entries.put("bb", DagCborValue.of(1));
    entries.put("a", DagCborValue.of(2));
    entries.put("ccc", DagCborValue.of(3));
    entries.put("b", DagCborValue.of(1.5));
    entries.put("é", DagCborValue.of(4));
    entries.put("link", DagCborValue.of(cid));
    final DagCborValue.Map map = DagCborValue.map(entries);
    // "é" is 2 UTF-8 bytes, so it sorts with "bb", after it bytewise (0xc3 > 0x62).
    assertThat(map.entries().keySet()).containsExactly("a", "b", "bb", "é", "ccc", "link");
    final String expected = "a6" + "6161" + "02" + "6162" + "fb3ff8000000000000"
        + "626262" + "01" + "62c3a9" + "04" + "63636363" + "03"
        + "646c696e6b" + "d82a" + "5825" + "00" + HEX.formatHex(cid.bytes());
    assertThat(HEX.formatHex(DagCbor.encode(map))).isEqualTo(expected);
  }

  @Test
  void encode_shouldOrderKeysByUtf8NotUtf16() {
    // U+FF61 is one UTF-16 unit but 3 UTF-8 bytes; U+10000 is two units but 4 bytes; "\u00e9z"
    // is 3 bytes. Length-first on UTF-8 bytes, then bytewise: ef.. (U+FF61) before c3 a9 7a? No:
    // same length 3, bytewise c3 < ef, so "éz" comes first.
    final Map<String, DagCborValue> entries = Map.of(
        "\uff61", DagCborValue.of(1), "\ud800\udc00", DagCborValue.of(2),
        "\u00e9z", DagCborValue.of(3), "zz", DagCborValue.of(4));
    assertThat(DagCborValue.map(entries).entries().keySet())
        .containsExactly("zz", "\u00e9z", "\uff61", "\ud800\udc00");
  }

  @Test
  void encode_shouldUseFloat64Always() {
    assertThat(HEX.formatHex(DagCbor.encode(DagCborValue.of(0.0))))
        .isEqualTo("fb0000000000000000");
    assertThat(HEX.formatHex(DagCbor.encode(DagCborValue.of(-0.0))))
        .isEqualTo("fb8000000000000000");
    assertThat(HEX.formatHex(DagCbor.encode(DagCborValue.of(1.0))))
        .isEqualTo("fb3ff0000000000000");
  }

  @Test
  void float_shouldRefuseNanAndInfinity() {
    assertThatThrownBy(() -> DagCborValue.of(Double.NaN)).isInstanceOf(DagCborException.class);
    assertThatThrownBy(() -> DagCborValue.of(Double.POSITIVE_INFINITY))
        .isInstanceOf(DagCborException.class);
    assertThatThrownBy(() -> DagCborValue.of(Double.NEGATIVE_INFINITY))
        .isInstanceOf(DagCborException.class);
  }

  @Test
  void bigInt_shouldHoldOnlyValuesOutsideLongInsideCbor() {
    assertThat(DagCborValue.integer(BigInteger.valueOf(Long.MIN_VALUE)))
        .isEqualTo(DagCborValue.of(Long.MIN_VALUE));
    assertThatThrownBy(() -> new DagCborValue.BigInt(BigInteger.TEN))
        .isInstanceOf(DagCborException.class);
    assertThatThrownBy(() -> DagCborValue.integer(BigInteger.ONE.shiftLeft(64)))
        .isInstanceOf(DagCborException.class);
    assertThatThrownBy(() -> DagCborValue.integer(BigInteger.ONE.shiftLeft(64).negate()
        .subtract(BigInteger.ONE))).isInstanceOf(DagCborException.class);
  }

  @Test
  void encode_shouldRefuseUnpairedSurrogates() {
    assertThatThrownBy(() -> DagCbor.encode(DagCborValue.of("a\ud800b")))
        .isInstanceOf(DagCborException.class).hasMessageContaining("surrogate");
    assertThatThrownBy(() -> DagCbor.encode(DagCborValue.of("\udc00")))
        .isInstanceOf(DagCborException.class);
    assertThatThrownBy(() -> DagCborValue.map(Map.of("\ud800", DagCborValue.nullValue())))
        .isInstanceOf(DagCborException.class);
  }

  @Test
  void encode_shouldWriteUtf8LikeTheJdk_forRandomValidStrings() {
    final Random random = new Random(7);
    for (int i = 0; i < 2_000; i++) {
      final StringBuilder sb = new StringBuilder();
      final int n = random.nextInt(20);
      for (int k = 0; k < n; k++) {
        int cp;
        do {
          cp = switch (random.nextInt(4)) {
            case 0 -> random.nextInt(0x80);
            case 1 -> random.nextInt(0x800);
            case 2 -> random.nextInt(0x10000);
            default -> 0x10000 + random.nextInt(0x100000);
          };
        } while (cp >= 0xd800 && cp <= 0xdfff);
        sb.appendCodePoint(cp);
      }
      final String s = sb.toString();
      final byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
      assertThat(Utf8.encode(s)).isEqualTo(utf8);
      assertThat(Utf8.firstInvalid(utf8, 0, utf8.length)).isEqualTo(-1);
      assertThat(DagCbor.decode(DagCbor.encode(DagCborValue.of(s))).asText()).isEqualTo(s);
    }
  }

  @Test
  void encode_shouldUseDefiniteLengths_forLongStrings() {
    final String s = "x".repeat(70_000);
    final byte[] bytes = DagCbor.encode(DagCborValue.of(s));
    assertThat(HEX.formatHex(bytes, 0, 5)).isEqualTo("7a00011170");
    assertThat(bytes).hasSize(70_005);
  }

  @Test
  void bytes_shouldBeCopiedInAndOut() {
    final byte[] data = {1, 2, 3};
    final DagCborValue.Bytes bytes = DagCborValue.of(data);
    data[0] = 9;
    assertThat(bytes.asBytes()).containsExactly(1, 2, 3);
    bytes.toByteArray()[1] = 9;
    assertThat(bytes.get(1)).isEqualTo((byte) 2);
    assertThat(bytes).isEqualTo(DagCborValue.of(new byte[] {1, 2, 3}));
  }
}
