package io.relaypinner.multiformats;

import static io.relaypinner.multiformats.TestData.ascii;
import static io.relaypinner.multiformats.TestData.hex;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

class MultihashTest {
  @Test
  void sha2_shouldMatchSpecVectors_whenFullLengthDigests() {
    int full = 0;
    int truncated = 0;
    for (final String line : TestData.lines("multihash/test_cases.csv")) {
      final String[] f = line.split(",");
      if (f[0].equals("algorithm") || !(f[0].equals("sha2-256") || f[0].equals("sha2-512"))) {
        continue;
      }
      final int bits = Integer.parseInt(f[1]);
      final byte[] input = ascii(f[2]);
      final byte[] expected = hex(f[3]);
      final Multihash ours =
          f[0].equals("sha2-256") ? Multihash.sha2_256(input) : Multihash.sha2_512(input);
      if (bits == ours.digestLength() * 8) {
        assertThat(ours.bytes()).as(line).isEqualTo(expected);
        final Multihash decoded = Multihash.decode(expected);
        assertThat(decoded).isEqualTo(ours);
        assertThat(decoded.hashCode()).isEqualTo(ours.hashCode());
        assertThat(decoded.verify(input)).isTrue();
        assertThat(decoded.verify(ascii(f[2] + "x"))).isFalse();
        assertThat(decoded.codeName()).isEqualTo(f[0]);
        full++;
      } else {
        // The spec allows truncated digests; we refuse them, but the prefix must still agree.
        final byte[] digest = Arrays.copyOfRange(expected, 2, expected.length);
        assertThat(ours.digest()).startsWith(digest);
        assertThatThrownBy(() -> Multihash.decode(expected))
            .isInstanceOf(MultiformatException.class)
            .hasMessageContaining("multihash " + f[0] + " digest length " + bits / 8);
        truncated++;
      }
    }
    assertThat(full).isEqualTo(40);
    assertThat(truncated).isEqualTo(100);
  }

  @Test
  void identity_shouldInlineData_upToTheCap() {
    final Multihash mh = Multihash.identity(ascii("abc"));
    assertThat(hex(mh.bytes())).isEqualTo("0003616263");
    assertThat(mh.verify(ascii("abc"))).isTrue();
    assertThat(mh.verify(ascii("abd"))).isFalse();
    assertThat(Multihash.identity(new byte[0]).bytes()).isEqualTo(hex("0000"));
    assertThat(Multihash.identity(new byte[128]).encodedLength()).isEqualTo(131);
    assertThatThrownBy(() -> Multihash.identity(new byte[129]))
        .isInstanceOf(MultiformatException.class)
        .hasMessage("multihash identity digest length 129 exceeds the limit of 128");
  }

  @Test
  void decode_shouldRejectWrongSha256Length_whenDigestIs31Bytes() {
    final byte[] bytes = new byte[33];
    bytes[0] = 0x12;
    bytes[1] = 31;
    assertThatThrownBy(() -> Multihash.decode(bytes))
        .isInstanceOf(MultiformatException.class)
        .hasMessage("multihash sha2-256 digest length 31, expected 32");
    assertThatThrownBy(() -> Multihash.of(0x13, new byte[32]))
        .isInstanceOf(MultiformatException.class)
        .hasMessage("multihash sha2-512 digest length 32, expected 64");
  }

  @Test
  void decode_shouldRejectTruncatedMultihash_whenDigestShorterThanDeclared() {
    final byte[] full = Multihash.sha2_256(ascii("x")).bytes();
    final byte[] cut = Arrays.copyOf(full, 20);
    assertThatThrownBy(() -> Multihash.decode(cut))
        .isInstanceOf(MultiformatException.class)
        .hasMessage("truncated multihash at offset 0: digest length 32 but 18 bytes remain");
    assertThatThrownBy(() -> Multihash.decode(hex("12")))
        .isInstanceOf(MultiformatException.class)
        .hasMessageContaining("truncated varint at offset 1");
    assertThatThrownBy(() -> Multihash.decode(new byte[0]))
        .isInstanceOf(MultiformatException.class)
        .hasMessageContaining("truncated varint at offset 0");
  }

  @Test
  void decode_shouldRejectDeclaredLengthLargerThanBuffer_beforeAllocating() {
    // Unknown hash code 0x56 with a digest length of 2^62: refused by the cap, never allocated.
    final byte[] bytes = hex("5680808080808080804000");
    assertThatThrownBy(() -> Multihash.decode(Arrays.copyOf(bytes, 10)))
        .isInstanceOf(MultiformatException.class)
        .hasMessageContaining("exceeds the limit of 128");
    assertThatThrownBy(() -> Multihash.decode(hex("00ff01")))
        .isInstanceOf(MultiformatException.class)
        .hasMessage("multihash identity digest length 255 exceeds the limit of 128 at offset 1");
    assertThatThrownBy(() -> Multihash.decode(hex("0005aabb")))
        .isInstanceOf(MultiformatException.class)
        .hasMessage("truncated multihash at offset 0: digest length 5 but 2 bytes remain");
  }

  @Test
  void decode_shouldRejectTrailingBytes_whenExactDecode() {
    final byte[] bytes = hex("000161ff");
    assertThatThrownBy(() -> Multihash.decode(bytes))
        .isInstanceOf(MultiformatException.class)
        .hasMessage("1 trailing bytes after multihash at offset 3");
    final Multihash.Decoded read = Multihash.read(bytes, 0, bytes.length);
    assertThat(read.length()).isEqualTo(3);
    assertThat(read.multihash()).isEqualTo(Multihash.identity(ascii("a")));
  }

  @Test
  void read_shouldDecodeAtOffset_withinLimit() {
    final byte[] mh = Multihash.sha2_256(ascii("hello")).bytes();
    final byte[] buffer = new byte[mh.length + 10];
    System.arraycopy(mh, 0, buffer, 4, mh.length);
    final Multihash.Decoded d = Multihash.read(buffer, 4, 4 + mh.length);
    assertThat(d.length()).isEqualTo(34);
    assertThat(d.multihash().verify(ascii("hello"))).isTrue();
    assertThatThrownBy(() -> Multihash.read(buffer, 4, 4 + mh.length - 1))
        .isInstanceOf(MultiformatException.class)
        .hasMessageContaining("truncated multihash at offset 4");
  }

  @Test
  void unknownHashFunction_shouldBeCarriedButNotVerified() {
    final Multihash blake3 = Multihash.decode(hex("1e03aabbcc"));
    assertThat(blake3.code()).isEqualTo(0x1e);
    assertThat(blake3.codeName()).isEqualTo("0x1e");
    assertThat(blake3.isVerifiable()).isFalse();
    assertThatThrownBy(() -> blake3.verify(new byte[0]))
        .isInstanceOf(MultiformatException.class)
        .hasMessage("cannot verify multihash 0x1e: unsupported hash function");
    assertThatThrownBy(() -> Multihash.decode(hex("ffffffff7f00")))
        .isInstanceOf(MultiformatException.class)
        .hasMessageContaining("too large");
  }

  @Test
  void record_shouldCopyArrays_andCompareByContent() {
    final byte[] digest = new byte[32];
    final Multihash a = Multihash.of(0x12, digest);
    digest[0] = 1;
    assertThat(a.digest()[0]).isZero();
    a.digest()[1] = 5;
    assertThat(a.digest()[1]).isZero();
    assertThat(a).isEqualTo(Multihash.of(0x12, new byte[32]));
    assertThat(a).isNotEqualTo(Multihash.of(0x12, digest));
    assertThat(a.toString()).startsWith("Multihash[sha2-256:0000");
    assertThat(Multihash.sha2_512(new byte[0]).bytes()).hasSize(66);
  }
}
