package io.relaypinner.multiformats;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HexFormat;

/**
 * A multihash as specified by {@code multiformats/multihash} ({@code README.md}, "Format"):
 * {@code varint(code) ‖ varint(digest length) ‖ digest}.
 *
 * <p>Any hash function code is carried (CIDs and certhashes may name hashes we cannot compute),
 * but only identity, sha2-256 and sha2-512 can be created and {@link #verify verified}. Limits:
 * codes up to 2<sup>31</sup>-1 (the whole multicodec table is below 2<sup>24</sup>); digests at
 * most {@value #MAX_DIGEST_LENGTH} bytes, which also caps identity multihashes (inline data);
 * sha2-256 digests must be exactly 32 bytes and sha2-512 exactly 64 (truncated digests, which the
 * spec allows, are refused because nothing in IPFS or libp2p produces them).
 *
 * <p>Equality is by code and digest content. The digest array is copied in and out.
 */
public record Multihash(int code, byte[] digest) {
  /** Largest digest accepted, for identity and for hash functions we do not know. */
  public static final int MAX_DIGEST_LENGTH = 128;

  /** A multihash read from a larger buffer and the number of bytes it took. */
  public record Decoded(Multihash multihash, int length) {}

  /**
   * Validates and copies.
   *
   * @throws MultiformatException when the code is negative, the digest is too long, or its length
   *     does not fit the hash function
   */
  public Multihash {
    if (code < 0) {
      throw new MultiformatException("negative multihash code " + code);
    }
    checkDigestLength(code, digest.length);
    digest = digest.clone();
  }

  /** The same as the canonical constructor. */
  public static Multihash of(final int code, final byte[] digest) {
    return new Multihash(code, digest);
  }

  /** The sha2-256 multihash of {@code data}. */
  public static Multihash sha2_256(final byte[] data) {
    return new Multihash(Multicodec.SHA2_256.code(), hash("SHA-256", data));
  }

  /** The sha2-512 multihash of {@code data}. */
  public static Multihash sha2_512(final byte[] data) {
    return new Multihash(Multicodec.SHA2_512.code(), hash("SHA-512", data));
  }

  /**
   * The identity multihash carrying {@code data} inline.
   *
   * @throws MultiformatException when {@code data} is longer than {@value #MAX_DIGEST_LENGTH}
   */
  public static Multihash identity(final byte[] data) {
    return new Multihash(Multicodec.IDENTITY.code(), data);
  }

  /** A copy of the digest. */
  @Override
  public byte[] digest() {
    return digest.clone();
  }

  /** The digest length in bytes. */
  public int digestLength() {
    return digest.length;
  }

  /** The hash function's multicodec name, or its code in hex when it is not one of ours. */
  public String codeName() {
    return Multicodec.nameOf(code);
  }

  /** Whether {@link #verify} can check data against this multihash. */
  public boolean isVerifiable() {
    return code == Multicodec.IDENTITY.code() || code == Multicodec.SHA2_256.code()
        || code == Multicodec.SHA2_512.code();
  }

  /**
   * Whether {@code data} hashes to this multihash (for identity: equals the digest).
   *
   * @throws MultiformatException when the hash function is not one we can compute
   */
  public boolean verify(final byte[] data) {
    if (code == Multicodec.IDENTITY.code()) {
      return Arrays.equals(digest, data);
    } else if (code == Multicodec.SHA2_256.code()) {
      return MessageDigest.isEqual(digest, hash("SHA-256", data));
    } else if (code == Multicodec.SHA2_512.code()) {
      return MessageDigest.isEqual(digest, hash("SHA-512", data));
    }
    throw new MultiformatException(
        "cannot verify multihash " + codeName() + ": unsupported hash function");
  }

  /** The length of {@link #bytes()}. */
  public int encodedLength() {
    return Uvarint.size(code) + Uvarint.size(digest.length) + digest.length;
  }

  /** The binary multihash. */
  public byte[] bytes() {
    final byte[] out = new byte[encodedLength()];
    write(out, 0);
    return out;
  }

  /**
   * Writes the binary multihash into {@code dst} at {@code offset}.
   *
   * @return the number of bytes written, {@link #encodedLength()}
   */
  public int write(final byte[] dst, final int offset) {
    int pos = offset;
    pos += Uvarint.write(code, dst, pos);
    pos += Uvarint.write(digest.length, dst, pos);
    System.arraycopy(digest, 0, dst, pos, digest.length);
    return pos + digest.length - offset;
  }

  /**
   * Decodes a binary multihash that fills {@code bytes} exactly.
   *
   * @throws MultiformatException when it is malformed, over a limit, or followed by extra bytes
   */
  public static Multihash decode(final byte[] bytes) {
    final Decoded decoded = read(bytes, 0, bytes.length);
    if (decoded.length() != bytes.length) {
      throw new MultiformatException(
          (bytes.length - decoded.length()) + " trailing bytes after multihash at offset "
              + decoded.length());
    }
    return decoded.multihash();
  }

  /**
   * Reads a binary multihash at {@code offset}, looking no further than {@code limit}; bytes after
   * it are left alone.
   *
   * @throws MultiformatException when it is malformed, over a limit, or the declared digest does
   *     not fit before {@code limit}
   */
  public static Decoded read(final byte[] src, final int offset, final int limit) {
    final long code = Uvarint.read(src, offset, limit);
    if (code > Integer.MAX_VALUE) {
      throw new MultiformatException(
          "multihash code 0x" + Long.toHexString(code) + " too large at offset " + offset);
    }
    int pos = offset + Uvarint.size(code);
    final long length = Uvarint.read(src, pos, limit);
    if (length > MAX_DIGEST_LENGTH) {
      throw new MultiformatException(
          "multihash " + Multicodec.nameOf(code) + " digest length " + length
              + " exceeds the limit of " + MAX_DIGEST_LENGTH + " at offset " + pos);
    }
    checkDigestLength((int) code, (int) length);
    pos += Uvarint.size(length);
    if (length > limit - pos) {
      throw new MultiformatException(
          "truncated multihash at offset " + offset + ": digest length " + length + " but "
              + (limit - pos) + " bytes remain");
    }
    final byte[] digest = Arrays.copyOfRange(src, pos, pos + (int) length);
    return new Decoded(new Multihash((int) code, digest), pos + (int) length - offset);
  }

  @Override
  public boolean equals(final Object o) {
    return o instanceof Multihash other && other.code == code
        && Arrays.equals(other.digest, digest);
  }

  @Override
  public int hashCode() {
    return 31 * code + Arrays.hashCode(digest);
  }

  /** E.g. {@code Multihash[sha2-256:9f86…]} with the full digest in hex. */
  @Override
  public String toString() {
    return "Multihash[" + codeName() + ":" + HexFormat.of().formatHex(digest) + "]";
  }

  private static void checkDigestLength(final int code, final int length) {
    final int expected;
    if (code == Multicodec.SHA2_256.code()) {
      expected = 32;
    } else if (code == Multicodec.SHA2_512.code()) {
      expected = 64;
    } else {
      if (length > MAX_DIGEST_LENGTH) {
        throw new MultiformatException(
            "multihash " + Multicodec.nameOf(code) + " digest length " + length
                + " exceeds the limit of " + MAX_DIGEST_LENGTH);
      }
      return;
    }
    if (length != expected) {
      throw new MultiformatException(
          "multihash " + Multicodec.nameOf(code) + " digest length " + length + ", expected "
              + expected);
    }
  }

  private static byte[] hash(final String algorithm, final byte[] data) {
    try {
      return MessageDigest.getInstance(algorithm).digest(data);
    } catch (final NoSuchAlgorithmException e) {
      // Every Java platform must provide SHA-256 and SHA-512.
      throw new IllegalStateException(algorithm + " is not available", e);
    }
  }
}
