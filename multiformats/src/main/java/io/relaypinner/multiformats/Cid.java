package io.relaypinner.multiformats;

import java.util.Objects;

/**
 * A content identifier as specified by {@code multiformats/cid} ({@code README.md}, "How does it
 * work?", "Versions" and "Decoding Algorithm").
 *
 * <ul>
 *   <li>CIDv0: the bare 34-byte sha2-256 multihash {@code 12 20 …}; the codec is implicitly
 *       dag-pb; text is base58btc without a multibase prefix ({@code Qm…}, 46 characters).
 *   <li>CIDv1: {@code varint(1) ‖ varint(codec) ‖ multihash}; text is a multibase string, printed
 *       in base32 ({@code b…}) unless another base is asked for.
 * </ul>
 *
 * <p>Binary rule (from the spec): exactly 34 bytes starting {@code 12 20} are a CIDv0, otherwise
 * the first varint is the version. Versions other than 0 and 1 are refused. Any codec up to
 * 2<sup>31</sup>-1 is carried; the multihash limits are those of {@link Multihash}. Text is
 * limited to {@value #MAX_TEXT_LENGTH} characters, more than the longest CID this class can hold
 * in any supported base. Equality is by (version, codec, multihash).
 */
public record Cid(int version, int codec, Multihash multihash) {
  /** Longest text {@link #parse} accepts. */
  public static final int MAX_TEXT_LENGTH = 512;

  private static final int V0_LENGTH = 34;
  private static final int V0_TEXT_LENGTH = 46;

  /** A CID read from a larger buffer and the number of bytes it took. */
  public record Decoded(Cid cid, int length) {}

  /**
   * Validates.
   *
   * @throws MultiformatException for a version other than 0 or 1, a negative codec, or a CIDv0
   *     that is not dag-pb with a sha2-256 multihash
   */
  public Cid {
    Objects.requireNonNull(multihash, "multihash");
    if (version != 0 && version != 1) {
      throw new MultiformatException("unsupported CID version " + version);
    }
    if (codec < 0) {
      throw new MultiformatException("negative CID codec " + codec);
    }
    if (version == 0) {
      if (codec != Multicodec.DAG_PB.code()) {
        throw new MultiformatException(
            "CIDv0 codec must be dag-pb, not " + Multicodec.nameOf(codec));
      }
      if (multihash.code() != Multicodec.SHA2_256.code()) {
        throw new MultiformatException(
            "CIDv0 multihash must be sha2-256, not " + multihash.codeName());
      }
    }
  }

  /** A CIDv0 (dag-pb) for a sha2-256 multihash. */
  public static Cid v0(final Multihash multihash) {
    return new Cid(0, Multicodec.DAG_PB.code(), multihash);
  }

  /** A CIDv1. */
  public static Cid v1(final int codec, final Multihash multihash) {
    return new Cid(1, codec, multihash);
  }

  /** A CIDv1. */
  public static Cid v1(final Multicodec codec, final Multihash multihash) {
    return new Cid(1, codec.code(), multihash);
  }

  /** A CIDv1; the same as {@link #v1(int, Multihash)}. */
  public static Cid of(final int codec, final Multihash multihash) {
    return v1(codec, multihash);
  }

  /** A CIDv1; the same as {@link #v1(Multicodec, Multihash)}. */
  public static Cid of(final Multicodec codec, final Multihash multihash) {
    return v1(codec, multihash);
  }

  /**
   * Parses CID text: a CIDv0 ({@code Qm…}, bare base58btc) or a multibase-encoded CIDv1 in any
   * base of {@link Multibase.Base}. A multibase string that holds a CIDv0 is refused, so that
   * every accepted text has one canonical CID.
   *
   * @throws MultiformatException when the text is not a valid CID
   */
  public static Cid parse(final CharSequence text) {
    if (text.length() == 0) {
      throw new MultiformatException("empty CID text");
    }
    if (text.length() > MAX_TEXT_LENGTH) {
      throw new MultiformatException(
          "CID text of " + text.length() + " characters exceeds the limit of " + MAX_TEXT_LENGTH);
    }
    if (text.charAt(0) == 'Q') {
      if (text.length() != V0_TEXT_LENGTH || text.charAt(1) != 'm') {
        throw new MultiformatException(
            "CIDv0 text must be " + V0_TEXT_LENGTH + " base58btc characters starting with Qm: "
                + Chars.abbreviate(text, 60));
      }
      final byte[] bytes = Base58.decode(text);
      if (bytes.length != V0_LENGTH || bytes[0] != 0x12 || bytes[1] != 0x20) {
        throw new MultiformatException("CIDv0 text does not hold a sha2-256 multihash: " + text);
      }
      return v0(Multihash.decode(bytes));
    }
    final Cid cid = fromBytes(Multibase.decode(text));
    if (cid.version() == 0) {
      throw new MultiformatException(
          "multibase CID text holds a CIDv0; CIDv0 text must be bare base58btc (Qm...)");
    }
    return cid;
  }

  /**
   * Decodes a binary CID that fills {@code bytes} exactly.
   *
   * @throws MultiformatException when it is malformed, over a limit, or followed by extra bytes
   */
  public static Cid fromBytes(final byte[] bytes) {
    final Decoded decoded = read(bytes, 0, bytes.length);
    if (decoded.length() != bytes.length) {
      throw new MultiformatException(
          (bytes.length - decoded.length()) + " trailing bytes after CID at offset "
              + decoded.length());
    }
    return decoded.cid();
  }

  /**
   * Reads a binary CID at {@code offset}, looking no further than {@code limit}; bytes after it
   * are left alone. A CID starting {@code 12 20} is a CIDv0 of 34 bytes.
   *
   * @throws MultiformatException when it is malformed, over a limit, or does not fit
   */
  public static Decoded read(final byte[] src, final int offset, final int limit) {
    Objects.checkFromToIndex(offset, limit, src.length);
    if (limit - offset >= 2 && src[offset] == 0x12 && src[offset + 1] == 0x20) {
      final Multihash.Decoded mh = Multihash.read(src, offset, limit);
      return new Decoded(v0(mh.multihash()), mh.length());
    }
    final long version = Uvarint.read(src, offset, limit);
    if (version != 1) {
      if (version == 0) {
        throw new MultiformatException(
            "CID version 0 at offset " + offset + " must be a bare sha2-256 multihash (12 20 ...)");
      }
      throw new MultiformatException(
          "unsupported CID version " + version + " at offset " + offset);
    }
    int pos = offset + Uvarint.size(version);
    final long codec = Uvarint.read(src, pos, limit);
    if (codec > Integer.MAX_VALUE) {
      throw new MultiformatException(
          "CID codec 0x" + Long.toHexString(codec) + " too large at offset " + pos);
    }
    pos += Uvarint.size(codec);
    final Multihash.Decoded mh = Multihash.read(src, pos, limit);
    pos += mh.length();
    return new Decoded(new Cid(1, (int) codec, mh.multihash()), pos - offset);
  }

  /** The codec's multicodec name, or its code in hex when it is not one of ours. */
  public String codecName() {
    return Multicodec.nameOf(codec);
  }

  /** The length of {@link #bytes()}. */
  public int encodedLength() {
    if (version == 0) {
      return multihash.encodedLength();
    }
    return Uvarint.size(version) + Uvarint.size(codec) + multihash.encodedLength();
  }

  /** The binary CID: the bare multihash for v0. */
  public byte[] bytes() {
    if (version == 0) {
      return multihash.bytes();
    }
    final byte[] out = new byte[encodedLength()];
    int pos = Uvarint.write(version, out, 0);
    pos += Uvarint.write(codec, out, pos);
    multihash.write(out, pos);
    return out;
  }

  /** This CID as version 1 (itself when it already is). */
  public Cid toV1() {
    return version == 1 ? this : v1(codec, multihash);
  }

  /**
   * The one form in which a CID is compared or used as a key: CIDv1 (a CIDv0 becomes the dag-pb
   * CIDv1 of the same multihash), whose {@link #toString()} is the lowercase base32 multibase
   * text. Every text that names the same CID parses to an equal value ({@code BAFY…},
   * {@code bafy…}, {@code zb2…} and {@code Qm…} of one dag-pb block), and canonicalising makes the
   * v0 and v1 forms equal too; the codec is kept (a raw CID and a dag-pb CID of one block stay
   * different CIDs: their links are read differently). Text as a client sent it must never be
   * compared: parse it, then canonicalise.
   */
  public Cid canonical() {
    return toV1();
  }

  /** The text form: bare base58btc for v0, base32 multibase for v1. */
  @Override
  public String toString() {
    return version == 0 ? Base58.encode(multihash.bytes()) : toString(Multibase.Base.BASE32);
  }

  /**
   * The text form in {@code base}: a multibase string for v1. A CIDv0 can only be printed in
   * base58btc, as its bare text.
   *
   * @throws MultiformatException for a CIDv0 and any base but base58btc
   */
  public String toString(final Multibase.Base base) {
    if (version == 0) {
      if (base != Multibase.Base.BASE58BTC) {
        throw new MultiformatException(
            "a CIDv0 can only be printed in base58btc, not " + base.multibaseName()
                + "; use toV1()");
      }
      return Base58.encode(multihash.bytes());
    }
    return Multibase.encode(base, bytes());
  }
}
