package io.relaypinner.multiformats;

import static io.relaypinner.multiformats.TestData.ascii;
import static io.relaypinner.multiformats.TestData.hex;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relaypinner.multiformats.Multibase.Base;
import io.relaypinner.testkit.TestVectors;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class CidTest {
  private static final Map<String, Multicodec> CODEC_BY_EXTENSION = Map.of(
      "dag-cbor", Multicodec.DAG_CBOR, "dag-json", Multicodec.DAG_JSON,
      "dag-pb", Multicodec.DAG_PB);

  private static List<Path> fixtureFolders() throws IOException {
    final Path root = TestVectors.path("ipld-codec-fixtures/fixtures");
    try (Stream<Path> s = Files.list(root)) {
      return s.filter(Files::isDirectory).sorted().toList();
    }
  }

  @Test
  void fixtureFileNames_shouldParsePrintAndHashToTheirBytes() throws IOException {
    int files = 0;
    for (final Path folder : fixtureFolders()) {
      try (Stream<Path> s = Files.list(folder)) {
        for (final Path file : s.sorted().toList()) {
          final String name = file.getFileName().toString();
          final int dot = name.indexOf('.');
          final String text = name.substring(0, dot);
          final Multicodec codec = CODEC_BY_EXTENSION.get(name.substring(dot + 1));
          assertThat(codec).as(name).isNotNull();
          final Cid cid = Cid.parse(text);
          assertThat(cid.toString()).isEqualTo(text);
          assertThat(cid.version()).isEqualTo(1);
          assertThat(cid.codec()).isEqualTo(codec.code());
          final byte[] block = TestData.read(file);
          assertThat(cid.multihash()).as(name).isEqualTo(Multihash.sha2_256(block));
          assertThat(cid.multihash().verify(block)).isTrue();
          assertThat(Cid.fromBytes(cid.bytes())).isEqualTo(cid);
          files++;
        }
      }
    }
    assertThat(files).isEqualTo(273);
  }

  @Test
  void cidFixtureFolderNames_shouldRoundTrip_whenTheyAreCids() throws IOException {
    int parsed = 0;
    int notCids = 0;
    for (final Path folder : fixtureFolders()) {
      final String name = folder.getFileName().toString();
      if (!name.startsWith("cid-")) {
        continue;
      }
      final String text = name.substring(4);
      final Cid cid;
      try {
        cid = Cid.parse(text);
      } catch (final MultiformatException e) {
        // "cid-arrayof" and "cid-mapof" name a shape, not a CID.
        assertThat(text).isIn("arrayof", "mapof");
        notCids++;
        continue;
      }
      final String printed = cid.version() == 0 ? cid.toString()
          : cid.toString(Multibase.baseOf(text));
      assertThat(printed).isEqualTo(text);
      assertThat(Cid.fromBytes(cid.bytes())).isEqualTo(cid);
      parsed++;
    }
    assertThat(parsed).isEqualTo(16);
    assertThat(notCids).isEqualTo(2);
  }

  @Test
  void v0_shouldBeBareSha256Multihash_andPrintAsBase58() {
    final Cid cid = Cid.parse("QmQg1v4o9xdT3Q14wh4S7dxZkDjyZ9ssFzFzyep1YrVJBY");
    assertThat(cid.version()).isZero();
    assertThat(cid.codec()).isEqualTo(0x70);
    assertThat(cid.bytes()).hasSize(34).startsWith(0x12, 0x20);
    assertThat(cid.bytes()).isEqualTo(cid.multihash().bytes());
    assertThat(Cid.fromBytes(cid.bytes())).isEqualTo(cid);
    assertThat(cid.toString(Base.BASE58BTC)).isEqualTo(cid.toString());
    final Cid v1 = cid.toV1();
    assertThat(v1.version()).isEqualTo(1);
    assertThat(v1.codecName()).isEqualTo("dag-pb");
    assertThat(v1.toString()).startsWith("bafybei");
    assertThat(v1).isNotEqualTo(cid);
    assertThat(v1.multihash()).isEqualTo(cid.multihash());
    assertThat(v1.toV1()).isSameAs(v1);
    assertThatThrownBy(() -> cid.toString(Base.BASE32))
        .isInstanceOf(MultiformatException.class)
        .hasMessageContaining("CIDv0 can only be printed in base58btc");
  }

  @Test
  void canonical_shouldBeOneValueAndOneText_forEverySpellingOfTheSameCid() {
    final Cid v0 = Cid.parse("QmQg1v4o9xdT3Q14wh4S7dxZkDjyZ9ssFzFzyep1YrVJBY");
    final Cid v1 = v0.toV1();
    final String text = v1.toString();
    for (final String spelling : List.of(v0.toString(), text, text.toUpperCase(Locale.ROOT),
        v1.toString(Base.BASE58BTC), v1.toString(Base.BASE36), v1.toString(Base.BASE64URL))) {
      assertThat(Cid.parse(spelling).canonical()).as(spelling).isEqualTo(v1);
      assertThat(Cid.parse(spelling).canonical().toString()).as(spelling).isEqualTo(text);
    }
    assertThat(text.toUpperCase(Locale.ROOT)).startsWith("BAFY");
    assertThat(v1.toString(Base.BASE58BTC)).startsWith("z");
    assertThat(v1.canonical()).isSameAs(v1);
    // The codec is part of the CID: a raw CID of the same block is another CID.
    final Cid raw = Cid.v1(Multicodec.RAW, v0.multihash());
    assertThat(raw.canonical()).isNotEqualTo(v1);
  }

  @Test
  void v1_shouldPrintInEveryBase_andParseBack() {
    final Cid cid = Cid.v1(Multicodec.RAW, Multihash.sha2_256(ascii("hello world")));
    assertThat(cid.toString())
        .isEqualTo("bafkreifzjut3te2nhyekklss27nh3k72ysco7y32koao5eei66wof36n5e");
    assertThat(hex(cid.bytes())).startsWith("01551220");
    for (final Base base : Base.values()) {
      final String text = cid.toString(base);
      assertThat(text.charAt(0)).isEqualTo(base.prefix());
      assertThat(Cid.parse(text)).isEqualTo(cid);
    }
    assertThat(Cid.of(0x55, cid.multihash())).isEqualTo(cid);
    assertThat(Cid.of(Multicodec.RAW, cid.multihash()).hashCode()).isEqualTo(cid.hashCode());
  }

  @Test
  void v0_shouldRequireDagPbAndSha256() {
    assertThatThrownBy(() -> new Cid(0, 0x71, Multihash.sha2_256(new byte[0])))
        .isInstanceOf(MultiformatException.class)
        .hasMessage("CIDv0 codec must be dag-pb, not dag-cbor");
    assertThatThrownBy(() -> Cid.v0(Multihash.sha2_512(new byte[0])))
        .isInstanceOf(MultiformatException.class)
        .hasMessage("CIDv0 multihash must be sha2-256, not sha2-512");
  }

  @Test
  void fromBytes_shouldRejectVersion2() {
    final byte[] v1 = Cid.v1(Multicodec.RAW, Multihash.sha2_256(new byte[0])).bytes();
    v1[0] = 2;
    assertThatThrownBy(() -> Cid.fromBytes(v1))
        .isInstanceOf(MultiformatException.class)
        .hasMessage("unsupported CID version 2 at offset 0");
    assertThatThrownBy(() -> new Cid(2, 0x55, Multihash.identity(new byte[0])))
        .isInstanceOf(MultiformatException.class)
        .hasMessage("unsupported CID version 2");
    // 0x12 with a non-0x20 length is not a CIDv0 and not version 18 either.
    assertThatThrownBy(() -> Cid.fromBytes(hex("1221")))
        .isInstanceOf(MultiformatException.class)
        .hasMessage("unsupported CID version 18 at offset 0");
  }

  @Test
  void fromBytes_shouldRejectVersion0Prefix_andTrailingBytes() {
    assertThatThrownBy(() -> Cid.fromBytes(hex("0070000161")))
        .isInstanceOf(MultiformatException.class)
        .hasMessageContaining("CID version 0 at offset 0 must be a bare sha2-256 multihash");
    final byte[] v0 = Cid.v0(Multihash.sha2_256(new byte[0])).bytes();
    final byte[] longer = new byte[35];
    System.arraycopy(v0, 0, longer, 0, 34);
    assertThatThrownBy(() -> Cid.fromBytes(longer))
        .isInstanceOf(MultiformatException.class)
        .hasMessage("1 trailing bytes after CID at offset 34");
    assertThatThrownBy(() -> Cid.fromBytes(new byte[0]))
        .isInstanceOf(MultiformatException.class)
        .hasMessageContaining("truncated varint");
  }

  @Test
  void fromBytes_shouldRejectTruncatedMultihash() {
    final byte[] full = Cid.v1(Multicodec.DAG_CBOR, Multihash.sha2_256(new byte[0])).bytes();
    final byte[] cut = Arrays.copyOf(full, full.length - 1);
    assertThatThrownBy(() -> Cid.fromBytes(cut))
        .isInstanceOf(MultiformatException.class)
        .hasMessage("truncated multihash at offset 2: digest length 32 but 31 bytes remain");
    final byte[] v0cut = Arrays.copyOf(Cid.v0(Multihash.sha2_256(new byte[0])).bytes(),
        30);
    assertThatThrownBy(() -> Cid.fromBytes(v0cut))
        .isInstanceOf(MultiformatException.class)
        .hasMessageContaining("truncated multihash");
    assertThatThrownBy(() -> Cid.fromBytes(hex("01ffffffff7f")))
        .isInstanceOf(MultiformatException.class)
        .hasMessage("CID codec 0x7ffffffff too large at offset 1");
  }

  @Test
  void read_shouldDecodePrefixAndReportLength_whenEmbedded() {
    final Cid v1 = Cid.v1(Multicodec.DAG_CBOR, Multihash.sha2_256(ascii("a")));
    final Cid v0 = Cid.v0(Multihash.sha2_256(ascii("b")));
    final byte[] a = v1.bytes();
    final byte[] b = v0.bytes();
    // DAG-CBOR tag 42 puts a 0x00 byte before the CID; read after it.
    final byte[] buffer = new byte[1 + a.length + b.length + 2];
    System.arraycopy(a, 0, buffer, 1, a.length);
    System.arraycopy(b, 0, buffer, 1 + a.length, b.length);
    final Cid.Decoded first = Cid.read(buffer, 1, buffer.length);
    assertThat(first).isEqualTo(new Cid.Decoded(v1, a.length));
    assertThat(first.cid().encodedLength()).isEqualTo(a.length);
    final Cid.Decoded second = Cid.read(buffer, 1 + a.length, buffer.length);
    assertThat(second).isEqualTo(new Cid.Decoded(v0, 34));
  }

  @Test
  void parse_shouldRejectBadText_withClearMessages() {
    assertThatThrownBy(() -> Cid.parse(""))
        .isInstanceOf(MultiformatException.class).hasMessage("empty CID text");
    assertThatThrownBy(() -> Cid.parse("QmShort"))
        .isInstanceOf(MultiformatException.class)
        .hasMessageContaining("CIDv0 text must be 46 base58btc characters starting with Qm");
    assertThatThrownBy(() -> Cid.parse("QmQg1v4o9xdT3Q14wh4S7dxZkDjyZ9ssFzFzyep1YrVJB0"))
        .isInstanceOf(MultiformatException.class)
        .hasMessage("invalid base58btc character '0' at position 45");
    assertThatThrownBy(() -> Cid.parse("xafy"))
        .isInstanceOf(MultiformatException.class)
        .hasMessage("unknown multibase prefix 'x'");
    final String v0InMultibase = "z" + Cid.parse(
        "QmQg1v4o9xdT3Q14wh4S7dxZkDjyZ9ssFzFzyep1YrVJBY").toString();
    assertThatThrownBy(() -> Cid.parse(v0InMultibase))
        .isInstanceOf(MultiformatException.class)
        .hasMessageContaining("holds a CIDv0");
    final String huge = "b" + "a".repeat(Cid.MAX_TEXT_LENGTH);
    assertThatThrownBy(() -> Cid.parse(huge))
        .isInstanceOf(MultiformatException.class)
        .hasMessageContaining("exceeds the limit of 512");
  }

  @Test
  void identityCid_shouldCarryInlineData() {
    final Cid cid = Cid.parse("bafkqabiaaebagba");
    assertThat(cid.codec()).isEqualTo(Multicodec.RAW.code());
    assertThat(cid.multihash().code()).isEqualTo(Multicodec.IDENTITY.code());
    assertThat(cid.multihash().digest()).isEqualTo(hex("0001020304"));
    assertThat(cid.multihash().verify(hex("0001020304"))).isTrue();
  }
}
