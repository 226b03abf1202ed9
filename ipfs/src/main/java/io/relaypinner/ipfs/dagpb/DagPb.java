package io.relaypinner.ipfs.dagpb;

import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.MultiformatException;
import io.relaypinner.multiformats.Multihash;
import java.io.ByteArrayOutputStream;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The DAG-PB codec (multicodec {@code 0x70}) as specified by {@code ipld/ipld}
 * {@code specs/codecs/dag-pb/spec.md}.
 *
 * <p>The decoder is strict, as the spec asks: in a {@code PBNode} only field 2 ({@code Links},
 * wire type 2) then at most one field 1 ({@code Data}, wire type 2), with no link after the
 * data; in a {@code PBLink} fields 1 {@code Hash} (required, a full CID), 2 {@code Name} (valid
 * UTF-8) and 3 {@code Tsize} (varint) each at most once and in that order; no unknown fields,
 * no other wire types, no truncation. Link sort order is <em>not</em> checked on decode (old
 * blocks exist with unsorted links and the spec only binds encoders).
 *
 * <p>The encoder writes canonical bytes: links first, then data, fields in number order,
 * minimal varints. It refuses links that are not sorted by name bytes, as the spec and the JS
 * reference ({@code @ipld/dag-pb} {@code validate}) do; Go's encoder sorts silently instead.
 * protoc-generated code must not be used for this: it would put {@code Data} first.
 *
 * <p>Limits: a block of at most {@value #MAX_BLOCK_SIZE} bytes and at most {@value #MAX_LINKS}
 * links.
 */
public final class DagPb {
  /** Largest block the decoder reads (bitswap caps blocks at 2 MiB; this leaves headroom). */
  public static final int MAX_BLOCK_SIZE = 4 * 1024 * 1024;
  /** Most links per node (1024-wide HAMT levels and 1024-child file nodes fit easily). */
  public static final int MAX_LINKS = 1 << 16;

  private static final int WIRE_VARINT = 0;
  private static final int WIRE_BYTES = 2;
  private static final Set<String> NODE_KEYS = Set.of("Data", "Links");
  private static final Set<String> LINK_KEYS = Set.of("Hash", "Name", "Tsize");

  private DagPb() {}

  /** The CIDv1 (dag-pb, sha2-256) of an encoded block. */
  public static Cid cidOf(final byte[] block) {
    return Cid.v1(Multicodec.DAG_PB, Multihash.sha2_256(block));
  }

  /**
   * The CIDs a dag-pb block links to, in link order: what a pinning or bitswap walk follows.
   *
   * @throws DagPbException when the block is not strict DAG-PB
   */
  public static List<Cid> linkedCids(final byte[] block) {
    return decode(block).links().stream().map(PbLink::hash).toList();
  }

  /**
   * Decodes a block.
   *
   * @throws DagPbException when the bytes are not strict DAG-PB or exceed a limit
   */
  public static PbNode decode(final byte[] block) {
    if (block.length > MAX_BLOCK_SIZE) {
      throw new DagPbException(
          "block of " + block.length + " bytes exceeds the limit of " + MAX_BLOCK_SIZE);
    }
    final Reader in = new Reader(block, 0, block.length);
    final List<PbLink> links = new ArrayList<>();
    byte[] data = null;
    while (in.hasMore()) {
      final int keyOffset = in.pos;
      final long key = in.varint();
      final long field = key >>> 3;
      final int wire = (int) (key & 7);
      if (wire != WIRE_BYTES) {
        throw new DagPbException("PBNode field " + field + " has wire type " + wire
            + ", expected 2, at offset " + keyOffset);
      }
      if (field == 1) {
        if (data != null) {
          throw new DagPbException("duplicate Data section at offset " + keyOffset);
        }
        data = in.bytes();
      } else if (field == 2) {
        if (data != null) {
          throw new DagPbException("duplicate Links section (link after Data) at offset "
              + keyOffset);
        }
        if (links.size() == MAX_LINKS) {
          throw new DagPbException("more than " + MAX_LINKS + " links at offset " + keyOffset);
        }
        final int length = in.length();
        links.add(decodeLink(block, in.pos, in.pos + length));
        in.pos += length;
      } else {
        throw new DagPbException("unknown PBNode field " + field + " at offset " + keyOffset);
      }
    }
    return new PbNode(Optional.ofNullable(data), links);
  }

  private static PbLink decodeLink(final byte[] block, final int start, final int end) {
    final Reader in = new Reader(block, start, end);
    Cid hash = null;
    String name = null;
    Long tsize = null;
    int lastField = 0;
    while (in.hasMore()) {
      final int keyOffset = in.pos;
      final long key = in.varint();
      final long field = key >>> 3;
      final int wire = (int) (key & 7);
      if (field < 1 || field > 3) {
        throw new DagPbException("unknown PBLink field " + field + " at offset " + keyOffset);
      }
      if (field <= lastField) {
        throw new DagPbException("PBLink field " + field + " out of order or repeated at offset "
            + keyOffset);
      }
      lastField = (int) field;
      final int expectedWire = field == 3 ? WIRE_VARINT : WIRE_BYTES;
      if (wire != expectedWire) {
        throw new DagPbException("PBLink field " + field + " has wire type " + wire
            + ", expected " + expectedWire + ", at offset " + keyOffset);
      }
      if (field == 1) {
        final int hashOffset = in.pos;
        final byte[] bytes = in.bytes();
        try {
          hash = Cid.fromBytes(bytes);
        } catch (MultiformatException e) {
          throw new DagPbException("Invalid Hash field found in link, expected CID, at offset "
              + hashOffset + ": " + e.getMessage(), e);
        }
      } else if (field == 2) {
        final int nameOffset = in.pos;
        name = strictUtf8(in.bytes(), nameOffset);
      } else {
        final int sizeOffset = in.pos;
        final long value = in.varint();
        if (value < 0) {
          throw new DagPbException("link Tsize over 2^63-1 at offset " + sizeOffset);
        }
        tsize = value;
      }
    }
    if (hash == null) {
      throw new DagPbException(
          "Invalid Hash field found in link, expected CID (link at offset " + start + ")");
    }
    return new PbLink(hash, Optional.ofNullable(name), Optional.ofNullable(tsize));
  }

  private static String strictUtf8(final byte[] bytes, final int offset) {
    try {
      return StandardCharsets.UTF_8.newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(bytes))
          .toString();
    } catch (CharacterCodingException e) {
      throw new DagPbException("link Name is not valid UTF-8 at offset " + offset, e);
    }
  }

  /**
   * Encodes a node to canonical bytes.
   *
   * @throws DagPbException when the links are not sorted by name bytes
   */
  public static byte[] encode(final PbNode node) {
    final ByteArrayOutputStream out = new ByteArrayOutputStream();
    PbLink previous = null;
    for (final PbLink link : node.links()) {
      if (previous != null && PbNode.LINK_ORDER.compare(previous, link) > 0) {
        throw new DagPbException("links must be sorted by Name bytes");
      }
      previous = link;
      final byte[] encoded = encodeLink(link);
      writeVarint(out, (2 << 3) | WIRE_BYTES);
      writeVarint(out, encoded.length);
      out.writeBytes(encoded);
    }
    node.data().ifPresent(data -> {
      writeVarint(out, (1 << 3) | WIRE_BYTES);
      writeVarint(out, data.length);
      out.writeBytes(data);
    });
    return out.toByteArray();
  }

  private static byte[] encodeLink(final PbLink link) {
    final ByteArrayOutputStream out = new ByteArrayOutputStream();
    final byte[] hash = link.hash().bytes();
    writeVarint(out, (1 << 3) | WIRE_BYTES);
    writeVarint(out, hash.length);
    out.writeBytes(hash);
    link.name().ifPresent(name -> {
      final byte[] bytes = utf8(name);
      writeVarint(out, (2 << 3) | WIRE_BYTES);
      writeVarint(out, bytes.length);
      out.writeBytes(bytes);
    });
    link.tsize().ifPresent(size -> {
      writeVarint(out, (3 << 3) | WIRE_VARINT);
      writeVarint(out, size);
    });
    return out.toByteArray();
  }

  /**
   * Converts an IPLD data-model value into a node, checking the DAG-PB schema as the spec's
   * "Data Model" section and {@code @ipld/dag-pb} {@code validate} do. The value uses plain Java
   * types: {@code Map<String, ?>}, {@code List<?>}, {@code byte[]}, {@link Cid}, {@code String},
   * {@code Long}/{@code Integer}/{@link BigInteger}, {@code Double}, {@code Boolean} and
   * {@code null}. {@code Links} is required; links must be sorted.
   *
   * @throws DagPbException naming the first violation
   */
  public static PbNode fromDataModel(final Object value) {
    if (!(value instanceof Map<?, ?> map)) {
      throw new DagPbException("Invalid DAG-PB form");
    }
    for (final Object key : map.keySet()) {
      if (!NODE_KEYS.contains(key)) {
        throw new DagPbException("Invalid DAG-PB form (extraneous properties)");
      }
    }
    Optional<byte[]> data = Optional.empty();
    if (map.containsKey("Data")) {
      if (!(map.get("Data") instanceof byte[] bytes)) {
        throw new DagPbException("Invalid DAG-PB form (Data must be bytes)");
      }
      data = Optional.of(bytes);
    }
    if (!(map.get("Links") instanceof List<?> list)) {
      throw new DagPbException("Invalid DAG-PB form (Links must be a list)");
    }
    final List<PbLink> links = new ArrayList<>();
    for (final Object item : list) {
      links.add(linkFromDataModel(item));
    }
    for (int i = 1; i < links.size(); i++) {
      if (PbNode.LINK_ORDER.compare(links.get(i - 1), links.get(i)) > 0) {
        throw new DagPbException("Invalid DAG-PB form (links must be sorted by Name bytes)");
      }
    }
    return new PbNode(data, links);
  }

  private static PbLink linkFromDataModel(final Object item) {
    if (!(item instanceof Map<?, ?> map)) {
      throw new DagPbException("Invalid DAG-PB form (bad link)");
    }
    for (final Object key : map.keySet()) {
      if (!LINK_KEYS.contains(key)) {
        throw new DagPbException("Invalid DAG-PB form (extraneous properties on link)");
      }
    }
    if (!map.containsKey("Hash")) {
      throw new DagPbException("Invalid DAG-PB form (link must have a Hash)");
    }
    if (!(map.get("Hash") instanceof Cid hash)) {
      throw new DagPbException("Invalid DAG-PB form (link Hash must be a CID)");
    }
    Optional<String> name = Optional.empty();
    if (map.containsKey("Name")) {
      if (!(map.get("Name") instanceof String text)) {
        throw new DagPbException("Invalid DAG-PB form (link Name must be a string)");
      }
      name = Optional.of(text);
    }
    Optional<Long> tsize = Optional.empty();
    if (map.containsKey("Tsize")) {
      final Object raw = map.get("Tsize");
      final long size;
      if (raw instanceof Long || raw instanceof Integer) {
        size = ((Number) raw).longValue();
      } else if (raw instanceof BigInteger big && big.bitLength() < 64) {
        size = big.longValue();
      } else {
        throw new DagPbException("Invalid DAG-PB form (link Tsize must be an integer)");
      }
      if (size < 0) {
        throw new DagPbException("Invalid DAG-PB form (link Tsize cannot be negative)");
      }
      tsize = Optional.of(size);
    }
    return new PbLink(hash, name, tsize);
  }

  static byte[] utf8(final String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  private static void writeVarint(final ByteArrayOutputStream out, final long value) {
    long v = value;
    while ((v & ~0x7FL) != 0) {
      out.write((int) ((v & 0x7F) | 0x80));
      v >>>= 7;
    }
    out.write((int) v);
  }

  /** Protobuf reader over {@code [pos, end)} of a block; offsets are block offsets. */
  private static final class Reader {
    private final byte[] src;
    private final int end;
    private int pos;

    Reader(final byte[] src, final int start, final int end) {
      this.src = src;
      this.pos = start;
      this.end = end;
    }

    boolean hasMore() {
      return pos < end;
    }

    /** A protobuf varint of up to 10 bytes; values over 2^63-1 come back negative. */
    long varint() {
      final int start = pos;
      long result = 0;
      for (int shift = 0; shift < 70; shift += 7) {
        if (pos >= end) {
          throw new DagPbException("truncated varint at offset " + start);
        }
        final int b = src[pos++] & 0xFF;
        if (shift == 63 && b > 1) {
          throw new DagPbException("varint overflows 64 bits at offset " + start);
        }
        result |= (long) (b & 0x7F) << shift;
        if ((b & 0x80) == 0) {
          if (b == 0 && shift > 0) {
            throw new DagPbException("non-minimal varint at offset " + start);
          }
          return result;
        }
      }
      throw new DagPbException("varint longer than 10 bytes at offset " + start);
    }

    int length() {
      final int start = pos;
      final long length = varint();
      if (length < 0 || length > end - pos) {
        throw new DagPbException("length " + Long.toUnsignedString(length)
            + " at offset " + start + " runs past the end (" + (end - pos) + " bytes left)");
      }
      return (int) length;
    }

    byte[] bytes() {
      final int length = length();
      final byte[] out = new byte[length];
      System.arraycopy(src, pos, out, 0, length);
      pos += length;
      return out;
    }
  }
}
