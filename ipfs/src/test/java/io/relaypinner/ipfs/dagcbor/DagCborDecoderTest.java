package io.relaypinner.ipfs.dagcbor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.Multihash;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class DagCborDecoderTest {
  private static final HexFormat HEX = HexFormat.of();
  private static final Cid CID =
      Cid.v1(Multicodec.DAG_CBOR, Multihash.sha2_256("x".getBytes(StandardCharsets.UTF_8)));

  private static byte[] hex(final String s) {
    return HEX.parseHex(s.replace(" ", ""));
  }

  @ParameterizedTest(name = "{0}: {1}")
  @CsvSource(delimiter = '|', textBlock = """
      indefinite array            | 9f ff                    | indefinite length
      indefinite map              | bf ff                    | indefinite length
      indefinite bytes            | 5f 41 00 ff              | indefinite length
      indefinite text             | 7f 61 61 ff              | indefinite length
      non-shortest uint8          | 18 17                    | shortest form
      non-shortest uint16         | 19 00 ff                 | shortest form
      non-shortest uint32         | 1a 00 00 ff ff           | shortest form
      non-shortest uint64         | 1b 00 00 00 00 ff ff ff ff | shortest form
      non-shortest negative       | 38 17                    | shortest form
      non-shortest length         | 58 01 00                 | shortest form
      non-shortest array length   | 99 00 01 f6              | shortest form
      non-shortest tag            | d9 00 2a 58 01 00        | shortest form
      reserved info 28            | 1c                       | reserved
      reserved info 30            | 5e                       | reserved
      half float                  | f9 3c 00                 | half-precision
      single float                | fa 3f 80 00 00           | single-precision
      NaN                         | fb 7f f8 00 00 00 00 00 00 | not allowed
      positive infinity           | fb 7f f0 00 00 00 00 00 00 | not allowed
      negative infinity           | fb ff f0 00 00 00 00 00 00 | not allowed
      tag 0                       | c0 60                    | only tag 42
      tag 1                       | c1 00                    | only tag 42
      bignum tag 2                | c2 41 01                 | only tag 42
      tag 42 over text            | d8 2a 61 00              | not a byte string
      tag 42 empty bytes          | d8 2a 40                 | 0x00
      tag 42 without 0x00 prefix  | d8 2a 42 01 55           | 0x00
      tag 42 bad CID              | d8 2a 43 00 01 55        | invalid CID
      tag 42 nested tag           | d8 2a d8 2a 41 00        | not a byte string
      tag 42 truncated            | d8 2a                    | truncated
      undefined                   | f7                       | undefined
      simple 16                   | f0                       | simple value 16
      simple 1-byte               | f8 20                    | simple value 24
      break                       | ff                       | break
      integer map key             | a1 01 02                 | not a string
      bytes map key               | a1 41 61 02              | not a string
      duplicate keys              | a2 61 61 01 61 61 02     | duplicate
      keys bytewise out of order  | a2 61 62 01 61 61 02     | canonical order
      keys length out of order    | a2 62 61 61 01 61 62 02  | canonical order
      overlong UTF-8              | 62 c0 80                 | UTF-8
      surrogate in UTF-8          | 63 ed a0 80              | UTF-8
      above U+10FFFF              | 64 f4 90 80 80           | UTF-8
      lone continuation byte      | 61 80                    | UTF-8
      truncated UTF-8 sequence    | 62 e6 b0                 | UTF-8
      invalid UTF-8 in key        | a1 61 ff 00              | UTF-8
      trailing bytes              | f6 f6                    | trailing
      empty input                 | ''                       | empty
      truncated header            | 19 01                    | truncated
      truncated array             | 82 01                    | exceeds the 1 bytes left
      truncated map value         | a1 61 61                 | truncated
      """)
  void decode_shouldThrowDagCborException_whenRuleIsBroken(
      final String rule, final String hex, final String message) {
    final byte[] bytes = hex(hex);
    assertThatThrownBy(() -> DagCbor.decode(bytes))
        .isInstanceOf(DagCborException.class)
        .hasMessageContaining(message)
        .hasMessageContaining("offset");
    assertThatThrownBy(() -> DagCbor.validate(bytes)).isInstanceOf(DagCborException.class);
  }

  @Test
  void decode_shouldReportTheOffset_whenErrorIsNested() {
    // [1, [2, {"a": undefined}]]: undefined sits at offset 7.
    assertThatThrownBy(() -> DagCbor.decode(hex("82 01 82 02 a1 61 61 f7")))
        .isInstanceOf(DagCborException.class)
        .hasMessage("undefined is not allowed at offset 7");
  }

  @Test
  void decode_shouldBuildTheDataModel_whenBytesAreValid() {
    final byte[] cid = CID.bytes();
    final String cidHex = HEX.formatHex(cid);
    // {"a": [1, -2, 1.5, true, false, null], "bb": h'0102', "ccc": "水", "link": tag42}
    final byte[] bytes = hex("a4 61 61 86 01 21 fb3ff8000000000000 f5 f4 f6"
        + " 62 6262 42 0102"
        + " 63 636363 63 e6b0b4"
        + " 64 6c696e6b d82a 58" + HEX.toHexDigits((byte) (cid.length + 1)) + "00" + cidHex);
    final DagCborValue value = DagCbor.decode(bytes);
    final DagCborValue.Map map = value.asMap();
    assertThat(map.entries().keySet()).containsExactly("a", "bb", "ccc", "link");
    assertThat(map.get("a").asList().items()).containsExactly(
        DagCborValue.of(1), DagCborValue.of(-2), DagCborValue.of(1.5), DagCborValue.of(true),
        DagCborValue.of(false), DagCborValue.nullValue());
    assertThat(map.get("bb").asBytes()).containsExactly(1, 2);
    assertThat(map.get("ccc").asText()).isEqualTo("水");
    assertThat(map.get("link").asLink()).isEqualTo(CID);
    assertThat(map.get("missing")).isNull();
    assertThat(DagCbor.links(bytes)).containsExactly(CID);
    assertThat(DagCbor.encode(value)).isEqualTo(bytes);
  }

  @ParameterizedTest(name = "{0} = {1}")
  @CsvSource({
      "00, 0",
      "17, 23",
      "1818, 24",
      "18ff, 255",
      "190100, 256",
      "19ffff, 65535",
      "1a00010000, 65536",
      "1affffffff, 4294967295",
      "1b0000000100000000, 4294967296",
      "1b7fffffffffffffff, 9223372036854775807",
      "1b8000000000000000, 9223372036854775808",
      "1bffffffffffffffff, 18446744073709551615",
      "20, -1",
      "37, -24",
      "3818, -25",
      "3b7fffffffffffffff, -9223372036854775808",
      "3b8000000000000000, -9223372036854775809",
      "3bffffffffffffffff, -18446744073709551616",
  })
  void decode_shouldReadEveryIntegerWidth_andEncodeBack(final String hex, final String decimal) {
    final BigInteger expected = new BigInteger(decimal);
    final DagCborValue value = DagCbor.decode(hex(hex));
    assertThat(value.asBigInteger()).isEqualTo(expected);
    assertThat(value).isEqualTo(DagCborValue.integer(expected));
    if (expected.bitLength() < Long.SIZE) {
      assertThat(value).isInstanceOf(DagCborValue.Int.class);
      assertThat(value.asLong()).isEqualTo(expected.longValueExact());
    } else {
      assertThat(value).isInstanceOf(DagCborValue.BigInt.class);
      assertThatThrownBy(value::asLong).isInstanceOf(DagCborException.class);
    }
    assertThat(HEX.formatHex(DagCbor.encode(value))).isEqualTo(hex);
  }

  @Test
  void decode_shouldEnforceMaxInputSize_whenConfigured() {
    final DagCborDecoder decoder =
        new DagCborDecoder(DagCborLimits.builder().maxInputSize(4).build());
    assertThat(decoder.decode(hex("63 616263")).asText()).isEqualTo("abc");
    assertThatThrownBy(() -> decoder.decode(hex("64 61626364")))
        .isInstanceOf(DagCborException.class)
        .hasMessageContaining("exceeds the limit of 4");
  }

  @Test
  void limits_shouldRejectOutOfRangeValues() {
    assertThatThrownBy(() -> DagCborLimits.builder().maxDepth(0).build())
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> DagCborLimits.builder().maxDepth(257).build())
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> DagCborLimits.builder().maxInputSize(0).build())
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(DagCborLimits.DEFAULT.maxInputSize()).isEqualTo(2 * 1024 * 1024);
    assertThat(DagCborLimits.DEFAULT.maxDepth()).isEqualTo(64);
  }

  @Test
  void mapValueSpans_shouldLocateTopLevelValues() {
    final byte[] bytes = hex("a2 61 61 82 01 02 62 6262 f5");
    final Map<String, DagCborDecoder.Span> spans = DagCbor.mapValueSpans(bytes);
    assertThat(spans.keySet()).containsExactly("a", "bb");
    assertThat(spans.get("a")).isEqualTo(new DagCborDecoder.Span(3, 3));
    assertThat(spans.get("bb").copyFrom(bytes)).containsExactly(0xf5);
    assertThatThrownBy(() -> DagCbor.mapValueSpans(hex("80")))
        .isInstanceOf(DagCborException.class).hasMessageContaining("not a map");
  }

  @Test
  void selectEntries_shouldSpliceRawValues_likeAnOrbitDbSignedEntry() {
    final DagCborValue.Map entry = DagCborValue.map(Map.of(
        "v", DagCborValue.of(2),
        "id", DagCborValue.of("/orbitdb/zdpuAexample"),
        "key", DagCborValue.of("02abcdef"),
        "sig", DagCborValue.of("3045022100"),
        "next", DagCborValue.list(DagCborValue.of("zdpuPrev")),
        "refs", DagCborValue.list(),
        "clock", DagCborValue.map(Map.of("id", DagCborValue.of("02abcdef"),
            "time", DagCborValue.of(7))),
        "payload", DagCborValue.map(Map.of("op", DagCborValue.of("PUT"),
            "value", DagCborValue.of(1.25), "link", DagCborValue.of(CID))),
        "identity", DagCborValue.of("zdpuIdentity")));
    final byte[] block = DagCbor.encode(entry);
    final List<String> signed = List.of("id", "payload", "next", "refs", "clock", "v");
    final java.util.LinkedHashMap<String, DagCborValue> expected = new java.util.LinkedHashMap<>();
    for (final String key : signed) {
      expected.put(key, entry.get(key));
    }
    assertThat(DagCbor.selectEntries(block, signed))
        .isEqualTo(DagCbor.encode(DagCborValue.map(expected)));
    assertThat(DagCbor.decode(block).asMap().entries().keySet()).containsExactly(
        "v", "id", "key", "sig", "next", "refs", "clock", "payload", "identity");
    assertThatThrownBy(() -> DagCbor.selectEntries(block, List.of("hash")))
        .isInstanceOf(DagCborException.class).hasMessageContaining("hash");
  }

  @Test
  void accessors_shouldThrowDagCborException_whenKindDiffers() {
    final DagCborValue value = DagCbor.decode(hex("a1 61 61 01"));
    assertThatThrownBy(value::asList).isInstanceOf(DagCborException.class)
        .hasMessage("expected list, found map");
    assertThatThrownBy(() -> value.asMap().get("a").asText())
        .isInstanceOf(DagCborException.class).hasMessage("expected string, found integer");
    assertThatThrownBy(() -> value.asMap().require("b")).isInstanceOf(DagCborException.class);
    assertThat(value.asMap().find("a")).contains(DagCborValue.of(1));
    assertThatThrownBy(() -> DagCborValue.list().get(0)).isInstanceOf(DagCborException.class);
  }
}
