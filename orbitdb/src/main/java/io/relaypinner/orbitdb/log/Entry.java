package io.relaypinner.orbitdb.log;

import io.relaypinner.ipfs.dagcbor.DagCbor;
import io.relaypinner.ipfs.dagcbor.DagCborException;
import io.relaypinner.ipfs.dagcbor.DagCborValue;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multibase;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.MultiformatException;
import io.relaypinner.orbitdb.MalformedBlockException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * One OrbitDB oplog entry, version 2 ({@code src/oplog/entry.js}), decoded from its dag-cbor block
 * but not yet verified: {@code {v: 2, id, key, sig, next, refs, clock: {id, time}, payload,
 * identity}}. {@code next} and {@code refs} are base58btc CID strings of older entries,
 * {@code identity} the CID string of the writer's identity block, {@code key} and {@code sig} hex
 * (passkey writers, {@code webauthn-varsig} and {@code worker-ed25519}, write {@code key},
 * {@code sig} and {@code clock.id} as byte strings: then {@link #binarySignature()} is true and
 * this class gives them in hex).
 * The entry's hash is the CID of the block bytes as received; there is no {@code hash} field.
 *
 * <p>The block is kept: the signature is checked over {@link #signedBytes()}, spliced from it.
 */
public final class Entry {
  /** Largest entry block accepted: js-libp2p 2 cannot carry a bigger one in a heads frame. */
  public static final int MAX_BLOCK_SIZE = 256 * 1024;

  /** Most CIDs accepted in {@code next}, and again in {@code refs}. */
  public static final int MAX_LINKS = 1024;

  /** The fields the signature covers (OrbitDB signs the entry before it adds the others). */
  public static final Set<String> SIGNED_FIELDS =
      Set.of("v", "id", "next", "refs", "clock", "payload");

  private static final Set<String> FIELDS =
      Set.of("v", "id", "key", "sig", "next", "refs", "clock", "payload", "identity");

  /** Log order: Lamport time, then clock id (OrbitDB's LastWriteWins with SortByClockId). */
  public static final Comparator<Entry> CLOCK_ORDER = Comparator
      .comparingLong(Entry::clockTime).thenComparing(Entry::clockId)
      .thenComparing(e -> e.cid().toString());

  private final Cid cid;
  private final byte[] block;
  private final String id;
  private final DagCborValue payload;
  private final List<Cid> next;
  private final List<Cid> refs;
  private final String clockId;
  private final long clockTime;
  private final String key;
  private final Cid identity;
  private final String sig;
  private final boolean binary;

  private Entry(final Cid cid, final byte[] block, final String id, final DagCborValue payload,
      final List<Cid> next, final List<Cid> refs, final String clockId, final long clockTime,
      final String key, final Cid identity, final String sig, final boolean binary) {
    this.cid = cid;
    this.block = block;
    this.id = id;
    this.payload = payload;
    this.next = next;
    this.refs = refs;
    this.clockId = clockId;
    this.clockTime = clockTime;
    this.key = key;
    this.identity = identity;
    this.sig = sig;
    this.binary = binary;
  }

  /**
   * Decodes an entry block; its CID is computed from the bytes as given.
   *
   * @throws MalformedBlockException when it is not a version 2 entry
   */
  public static Entry decode(final byte[] block) {
    return decode(DagCbor.cid(block), block);
  }

  /**
   * Decodes an entry block fetched as {@code cid}.
   *
   * @throws MalformedBlockException when the bytes do not hash to {@code cid} or are not a
   *     version 2 entry
   */
  public static Entry decode(final Cid cid, final byte[] block) {
    Objects.requireNonNull(cid, "cid");
    if (block.length > MAX_BLOCK_SIZE) {
      throw new MalformedBlockException("entry block of " + block.length + " bytes exceeds "
          + MAX_BLOCK_SIZE);
    }
    if (cid.codec() != Multicodec.DAG_CBOR.code() || !cid.multihash().verify(block)) {
      throw new MalformedBlockException("entry block does not hash to " + cid);
    }
    try {
      final DagCborValue value = DagCbor.decode(block);
      if (value.kind() != DagCborValue.Kind.MAP) {
        // OrbitDB's replication encryption wraps the entry in a byte string; unreadable here.
        throw new MalformedBlockException("entry block is a " + value.kind().name()
            .toLowerCase(java.util.Locale.ROOT) + ", not a map (encrypted entries are not"
            + " supported)");
      }
      final DagCborValue.Map map = value.asMap();
      for (final String field : map.entries().keySet()) {
        if (!FIELDS.contains(field)) {
          throw new MalformedBlockException("entry has an unknown field \"" + field + "\"");
        }
      }
      final long v = map.require("v").asLong();
      if (v != 2) {
        throw new MalformedBlockException("entry version " + v + " is not supported (only 2)");
      }
      final String id = map.require("id").asText();
      final DagCborValue payload = map.require("payload");
      final List<Cid> next = links(map.require("next"), "next");
      final List<Cid> refs = links(map.require("refs"), "refs");
      final DagCborValue.Map clock = map.require("clock").asMap();
      if (clock.size() != 2) {
        throw new MalformedBlockException("entry clock must hold exactly id and time");
      }
      final String clockId = textOrHex(clock.require("id"));
      final long time = clock.require("time").asLong();
      if (time < 0) {
        throw new MalformedBlockException("entry clock time " + time + " is negative");
      }
      final DagCborValue keyValue = map.require("key");
      final DagCborValue sigValue = map.require("sig");
      final boolean binary = keyValue.kind() == DagCborValue.Kind.BYTES;
      if ((sigValue.kind() == DagCborValue.Kind.BYTES) != binary) {
        throw new MalformedBlockException("entry key and sig must both be text or both bytes");
      }
      final Cid identity = cidText(map.require("identity").asText(), "identity");
      return new Entry(cid, block, id, payload, next, refs, clockId, time, textOrHex(keyValue),
          identity, textOrHex(sigValue), binary);
    } catch (final DagCborException e) {
      throw new MalformedBlockException("malformed entry " + cid + ": " + e.getMessage(), e);
    }
  }

  private static String textOrHex(final DagCborValue value) {
    return value.kind() == DagCborValue.Kind.BYTES
        ? java.util.HexFormat.of().formatHex(value.asBytes()) : value.asText();
  }

  private static List<Cid> links(final DagCborValue value, final String field) {
    final DagCborValue.List list = value.asList();
    if (list.size() > MAX_LINKS) {
      throw new MalformedBlockException("entry " + field + " holds " + list.size()
          + " links, more than " + MAX_LINKS);
    }
    final List<Cid> out = new ArrayList<>(list.size());
    for (final DagCborValue item : list.items()) {
      out.add(cidText(item.asText(), field));
    }
    return List.copyOf(out);
  }

  /** OrbitDB writes every hash as a base58btc CIDv1 dag-cbor string ({@code zdpu…}). */
  private static Cid cidText(final String text, final String field) {
    if (text.isEmpty() || text.charAt(0) != Multibase.Base.BASE58BTC.prefix()) {
      throw new MalformedBlockException("entry " + field + " is not a base58btc CID: "
          + (text.length() > 80 ? text.substring(0, 80) + "..." : text));
    }
    try {
      final Cid cid = Cid.parse(text);
      if (cid.version() != 1 || cid.codec() != Multicodec.DAG_CBOR.code()) {
        throw new MalformedBlockException("entry " + field + " is not a dag-cbor CIDv1: " + text);
      }
      return cid;
    } catch (final MultiformatException e) {
      throw new MalformedBlockException("entry " + field + " is not a CID: " + text, e);
    }
  }

  /** The entry's hash: the CID of its block. */
  public Cid cid() {
    return cid;
  }

  /** The hash as OrbitDB prints it ({@code zdpu…}). */
  public String hash() {
    return cid.toString(Multibase.Base.BASE58BTC);
  }

  /** A copy of the block bytes. */
  public byte[] block() {
    return block.clone();
  }

  /** The block's size in bytes. */
  public int blockSize() {
    return block.length;
  }

  /** The log id: the database address string. */
  public String id() {
    return id;
  }

  /** The operation, e.g. {@code {op: 'PUT', key, value}}. */
  public DagCborValue payload() {
    return payload;
  }

  /** The previous heads of the writer's log. */
  public List<Cid> next() {
    return next;
  }

  /** Skip-list references to older entries. */
  public List<Cid> refs() {
    return refs;
  }

  /** {@code clock.id}: the writer's signing key, hex. */
  public String clockId() {
    return clockId;
  }

  /** {@code clock.time}: the Lamport time. */
  public long clockTime() {
    return clockTime;
  }

  /** The signing public key, hex (33-byte secp256k1 compressed, or 32-byte Ed25519). */
  public String key() {
    return key;
  }

  /** The CID of the writer's identity block. */
  public Cid identity() {
    return identity;
  }

  /** The signature, hex. */
  public String sig() {
    return sig;
  }

  /** Whether {@code key} and {@code sig} were byte strings (passkey writers) rather than text. */
  public boolean binarySignature() {
    return binary;
  }

  /**
   * The bytes the signature covers: the canonical dag-cbor map of {@link #SIGNED_FIELDS}, spliced
   * from the received value bytes (never re-encoded).
   */
  public byte[] signedBytes() {
    return DagCbor.selectEntries(block, SIGNED_FIELDS);
  }

  /** {@code payload.op} when the payload is a map with a string {@code op}. */
  public java.util.Optional<String> op() {
    return payloadText("op");
  }

  /** {@code payload.key} when the payload is a map with a string {@code key}. */
  public java.util.Optional<String> payloadKey() {
    return payloadText("key");
  }

  /** {@code payload.value}, when the payload is a map that has one. */
  public java.util.Optional<DagCborValue> payloadValue() {
    if (payload.kind() != DagCborValue.Kind.MAP) {
      return java.util.Optional.empty();
    }
    return payload.asMap().find("value");
  }

  private java.util.Optional<String> payloadText(final String field) {
    if (payload.kind() != DagCborValue.Kind.MAP) {
      return java.util.Optional.empty();
    }
    final DagCborValue value = payload.asMap().get(field);
    return value != null && value.kind() == DagCborValue.Kind.STRING
        ? java.util.Optional.of(value.asText()) : java.util.Optional.empty();
  }

  @Override
  public boolean equals(final Object o) {
    return o instanceof Entry other && cid.equals(other.cid);
  }

  @Override
  public int hashCode() {
    return cid.hashCode();
  }

  @Override
  public String toString() {
    return "Entry[" + hash() + ", time=" + clockTime + "]";
  }
}
