package io.relaypinner.ipfs.unixfs;

/**
 * MurmurHash3 x64 128-bit (seed 0), reduced to its first 64-bit half {@code h1}. This is the
 * UnixFS HAMT hash {@code murmur3-x64-64} (multicodec {@code 0x22}, {@code ipfs/specs}
 * {@code src/unixfs.md}): Go and {@code ipfs-unixfs-exporter} take the first 8 bytes of the
 * 128-bit digest, which are {@code h1} in big-endian order, and read index bits from its most
 * significant end. Written from Austin Appleby's public-domain reference algorithm.
 */
final class Murmur3 {
  private static final long C1 = 0x87c37b91114253d5L;
  private static final long C2 = 0x4cf5ad432745937fL;

  private Murmur3() {}

  /** The {@code h1} half of MurmurHash3_x64_128(data, seed 0). */
  static long hash64(final byte[] data) {
    final int length = data.length;
    final int blocks = length / 16;
    long h1 = 0;
    long h2 = 0;
    for (int i = 0; i < blocks; i++) {
      long k1 = littleEndian(data, i * 16, 8);
      long k2 = littleEndian(data, i * 16 + 8, 8);
      k1 *= C1;
      k1 = Long.rotateLeft(k1, 31);
      k1 *= C2;
      h1 ^= k1;
      h1 = Long.rotateLeft(h1, 27);
      h1 += h2;
      h1 = h1 * 5 + 0x52dce729;
      k2 *= C2;
      k2 = Long.rotateLeft(k2, 33);
      k2 *= C1;
      h2 ^= k2;
      h2 = Long.rotateLeft(h2, 31);
      h2 += h1;
      h2 = h2 * 5 + 0x38495ab5;
    }
    final int tail = blocks * 16;
    final int rest = length - tail;
    if (rest > 8) {
      long k2 = littleEndian(data, tail + 8, rest - 8);
      k2 *= C2;
      k2 = Long.rotateLeft(k2, 33);
      k2 *= C1;
      h2 ^= k2;
    }
    if (rest > 0) {
      long k1 = littleEndian(data, tail, Math.min(rest, 8));
      k1 *= C1;
      k1 = Long.rotateLeft(k1, 31);
      k1 *= C2;
      h1 ^= k1;
    }
    h1 ^= length;
    h2 ^= length;
    h1 += h2;
    h2 += h1;
    h1 = fmix(h1);
    h2 = fmix(h2);
    h1 += h2;
    return h1;
  }

  private static long littleEndian(final byte[] data, final int offset, final int count) {
    long value = 0;
    for (int i = count - 1; i >= 0; i--) {
      value = (value << 8) | (data[offset + i] & 0xFFL);
    }
    return value;
  }

  private static long fmix(final long value) {
    long k = value;
    k ^= k >>> 33;
    k *= 0xff51afd7ed558ccdL;
    k ^= k >>> 33;
    k *= 0xc4ceb9fe1a85ec53L;
    k ^= k >>> 33;
    return k;
  }
}
