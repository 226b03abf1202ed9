package io.relaypinner.multiformats;

import static io.relaypinner.multiformats.TestData.ascii;
import static io.relaypinner.multiformats.TestData.hex;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relaypinner.multiformats.Multibase.Base;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class MultibaseTest {
  @ParameterizedTest
  @ValueSource(strings = {
      "multibase/basic.csv", "multibase/leading_zero.csv", "multibase/two_leading_zeros.csv"})
  void encodeAndDecode_shouldMatchSpecVectors_forEverySupportedBase(final String file) {
    final List<String> lines = TestData.lines(file);
    final byte[] input = TestData.unescape(TestData.nameAndQuoted(lines.get(0))[1]);
    final Set<Base> covered = EnumSet.noneOf(Base.class);
    for (final String line : lines.subList(1, lines.size())) {
      if (line.isBlank()) {
        continue;
      }
      final String[] row = TestData.nameAndQuoted(line);
      final Optional<Base> base = Base.forName(row[0]);
      if (base.isEmpty()) {
        continue;
      }
      assertThat(Multibase.encode(base.get(), input)).as("%s encode", row[0]).isEqualTo(row[1]);
      assertThat(Multibase.decode(row[1])).as("%s decode", row[0]).isEqualTo(input);
      assertThat(Multibase.baseOf(row[1])).isEqualTo(base.get());
      covered.add(base.get());
    }
    assertThat(covered).isEqualTo(EnumSet.allOf(Base.class));
  }

  @Test
  void decode_shouldIgnoreCase_whenCaseInsensitivityVectors() {
    final List<String> lines = TestData.lines("multibase/case_insensitivity.csv");
    final byte[] input = TestData.unescape(TestData.nameAndQuoted(lines.get(0))[1]);
    final Set<Base> covered = EnumSet.noneOf(Base.class);
    for (final String line : lines.subList(1, lines.size())) {
      if (line.isBlank()) {
        continue;
      }
      final String[] row = TestData.nameAndQuoted(line);
      final Optional<Base> base = Base.forName(row[0]);
      if (base.isPresent()) {
        assertThat(Multibase.decode(row[1])).as(row[0]).isEqualTo(input);
        covered.add(base.get());
      }
    }
    assertThat(covered).containsExactlyInAnyOrder(
        Base.BASE16, Base.BASE16_UPPER, Base.BASE32, Base.BASE32_UPPER, Base.BASE36,
        Base.BASE36_UPPER);
  }

  @Test
  void roundTrip_shouldPreserveBytes_forRandomInputsInEveryBase() {
    final Random random = new Random(7);
    for (int i = 0; i < 500; i++) {
      final byte[] data = new byte[random.nextInt(80)];
      random.nextBytes(data);
      for (int z = 0; z < random.nextInt(4) && z < data.length; z++) {
        data[z] = 0;
      }
      for (final Base base : Base.values()) {
        final String text = Multibase.encode(base, data);
        assertThat(text.charAt(0)).isEqualTo(base.prefix());
        assertThat(Multibase.decode(text)).as("%s %s", base, hex(data)).isEqualTo(data);
      }
      assertThat(Base58.decode(Base58.encode(data))).isEqualTo(data);
    }
  }

  @Test
  void base58_shouldKeepLeadingZeros_whenEncodingAndDecoding() {
    assertThat(Base58.encode(new byte[0])).isEmpty();
    assertThat(Base58.encode(new byte[3])).isEqualTo("111");
    assertThat(Base58.encode(hex("000001"))).isEqualTo("112");
    assertThat(Base58.decode("111")).isEqualTo(new byte[3]);
    assertThat(Base58.decode("112")).isEqualTo(hex("000001"));
    assertThat(Base58.encode(ascii("Hello World!"))).isEqualTo("2NEpo7TZRRrLZSi2U");
    assertThat(Base58.decode("2NEpo7TZRRrLZSi2U")).isEqualTo(ascii("Hello World!"));
    assertThat(Base58.encode(hex("00000000000000000000000000000000000000000000000000ff")))
        .startsWith("1111111111111111111111111");
  }

  @Test
  void base58_shouldRejectCharacterOutsideAlphabet_withPosition() {
    for (final String bad : new String[] {"0", "O", "I", "l", "+", " "}) {
      assertThatThrownBy(() -> Base58.decode("abc" + bad + "def"))
          .as(bad)
          .isInstanceOf(MultiformatException.class)
          .hasMessageContaining("invalid base58btc character")
          .hasMessageContaining("at position 3");
    }
    assertThatThrownBy(() -> Base58.decode("ab\u00e9"))
        .isInstanceOf(MultiformatException.class)
        .hasMessageContaining("U+00E9 at position 2");
  }

  @Test
  void decode_shouldReportPositionIncludingPrefix_whenBadCharacter() {
    assertThatThrownBy(() -> Multibase.decode("z12l4"))
        .isInstanceOf(MultiformatException.class)
        .hasMessage("invalid base58btc character 'l' at position 3");
    assertThatThrownBy(() -> Multibase.decode("bmfrgg!"))
        .isInstanceOf(MultiformatException.class)
        .hasMessage("invalid base32 character '!' at position 6");
    assertThatThrownBy(() -> Multibase.decode("kab-"))
        .isInstanceOf(MultiformatException.class)
        .hasMessageContaining("invalid base36 character '-' at position 3");
  }

  @Test
  void decode_shouldRejectUnknownPrefix_whenNotSupported() {
    assertThatThrownBy(() -> Multibase.decode("x1234"))
        .isInstanceOf(MultiformatException.class)
        .hasMessage("unknown multibase prefix 'x'");
    // base32pad ('c') and base64pad ('M') are real multibase prefixes we do not support.
    assertThatThrownBy(() -> Multibase.decode("cpfsxgidnmfxgsibb"))
        .isInstanceOf(MultiformatException.class)
        .hasMessage("unknown multibase prefix 'c'");
    assertThatThrownBy(() -> Multibase.decode("MeWVzIG1hbmkgIQ=="))
        .isInstanceOf(MultiformatException.class)
        .hasMessage("unknown multibase prefix 'M'");
    assertThatThrownBy(() -> Multibase.decode(""))
        .isInstanceOf(MultiformatException.class)
        .hasMessage("empty multibase string");
  }

  @Test
  void decode_shouldRejectPaddingAndImpossibleLengths_whenRfc4648() {
    assertThatThrownBy(() -> Multibase.decode("meWVzIG1hbmkgIQ=="))
        .isInstanceOf(MultiformatException.class)
        .hasMessageContaining("invalid base64 character '='");
    assertThatThrownBy(() -> Multibase.decode("fabc"))
        .isInstanceOf(MultiformatException.class)
        .hasMessageContaining("impossible length");
    assertThatThrownBy(() -> Multibase.decode("ba"))
        .isInstanceOf(MultiformatException.class)
        .hasMessageContaining("impossible length");
    assertThatThrownBy(() -> Multibase.decode("uA"))
        .isInstanceOf(MultiformatException.class)
        .hasMessageContaining("impossible length");
    // "bb" has non-zero bits after the only byte; the canonical text for 0x08 is "ba".
    assertThatThrownBy(() -> Multibase.decode("bab"))
        .isInstanceOf(MultiformatException.class)
        .hasMessageContaining("non-zero bits");
    assertThat(Multibase.decode("baa")).isEqualTo(new byte[1]);
  }

  @Test
  void decode_shouldBeCaseSensitive_forBase58AndBase64() {
    assertThat(Multibase.decode("z7paNL19xttacUY"))
        .isNotEqualTo(Multibase.decode("z7PANL19XTTACUY"));
    assertThat(Multibase.decode("mYQ")).isEqualTo(ascii("a"));
    assertThatThrownBy(() -> Multibase.decode("uYQ-_+"))
        .isInstanceOf(MultiformatException.class)
        .hasMessageContaining("'+' at position 5");
  }

  @Test
  void decode_shouldRejectText_whenOverLimitForQuadraticBases() {
    final char[] chars = new char[Base58.MAX_TEXT_LENGTH + 1];
    Arrays.fill(chars, '2');
    final String tooLong = new String(chars);
    assertThatThrownBy(() -> Base58.decode(tooLong))
        .isInstanceOf(MultiformatException.class)
        .hasMessageContaining("exceeds the limit of 65536");
    assertThatThrownBy(() -> Multibase.decode("k" + tooLong))
        .isInstanceOf(MultiformatException.class)
        .hasMessageContaining("exceeds the limit");
    assertThatThrownBy(() -> Base58.encode(new byte[Base58.MAX_BYTES + 1]))
        .isInstanceOf(MultiformatException.class)
        .hasMessageContaining("exceeds the limit of 40960");
  }

  @Test
  void quadraticBases_shouldRoundTrip_whenInputAtTheLimit() {
    final char[] chars = new char[Base58.MAX_TEXT_LENGTH];
    Arrays.fill(chars, 'z');
    final String longest = new String(chars);
    final byte[] biggest = new byte[Base58.MAX_BYTES];
    Arrays.fill(biggest, (byte) 0xff);
    assertThat(Base58.decode(longest)).hasSizeGreaterThan(Base58.MAX_BYTES);
    final String b58 = Base58.encode(biggest);
    assertThat(Base58.decode(b58)).isEqualTo(biggest);
    final String b36 = Base.BASE36.encodeBare(biggest);
    assertThat(b36.length()).isLessThanOrEqualTo(Base58.MAX_TEXT_LENGTH);
    assertThat(Base.BASE36.decodeBare(b36)).isEqualTo(biggest);
  }

  @Test
  void bareCodecs_shouldNotUsePrefix_whenEncodeBare() {
    assertThat(Base.BASE64URL.encodeBare(hex("fbff"))).isEqualTo("-_8");
    assertThat(Base.BASE64.encodeBare(hex("fbff"))).isEqualTo("+/8");
    assertThat(Base.BASE16_UPPER.encodeBare(hex("abcd"))).isEqualTo("ABCD");
    assertThat(Base.BASE32_UPPER.decodeBare("mzxw6ytb")).isEqualTo(ascii("fooba"));
    assertThat(Base.forPrefix('k')).contains(Base.BASE36);
    assertThat(Base.forPrefix('?')).isEmpty();
    assertThat(Base.BASE58BTC.multibaseName()).isEqualTo("base58btc");
  }
}
