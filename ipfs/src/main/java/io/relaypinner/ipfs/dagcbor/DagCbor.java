package io.relaypinner.ipfs.dagcbor;

import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.Multihash;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Entry points for DAG-CBOR ({@code ipld/ipld} {@code specs/codecs/dag-cbor/spec.md}, multicodec
 * {@code 0x71}) with {@link DagCborLimits#DEFAULT}: strict decoding ({@link DagCborDecoder}),
 * canonical encoding ({@link DagCborEncoder}), link extraction and CIDs.
 *
 * <p>To verify a received block, hash the bytes as received ({@link #cid}), never a re-encoding.
 */
public final class DagCbor {
  private static final DagCborDecoder DECODER = new DagCborDecoder(DagCborLimits.DEFAULT);

  private DagCbor() {}

  /**
   * Decodes a block strictly.
   *
   * @throws DagCborException when it is not strict DAG-CBOR or exceeds a default limit
   */
  public static DagCborValue decode(final byte[] block) {
    return DECODER.decode(block);
  }

  /**
   * Encodes canonically.
   *
   * @throws DagCborException when a string holds an unpaired surrogate or nesting is too deep
   */
  public static byte[] encode(final DagCborValue value) {
    return DagCborEncoder.encode(value);
  }

  /**
   * Checks a block without building a tree.
   *
   * @throws DagCborException when it is not strict DAG-CBOR
   */
  public static void validate(final byte[] block) {
    DECODER.validate(block);
  }

  /**
   * The links (tag 42) of a block in document order, repeats included, without building a tree.
   *
   * @throws DagCborException when it is not strict DAG-CBOR
   */
  public static List<Cid> links(final byte[] block) {
    final ArrayList<Cid> out = new ArrayList<>();
    DECODER.forEachLink(block, out::add);
    return out;
  }

  /**
   * Hands each link of a validated block to {@code sink}; see
   * {@link DagCborDecoder#forEachLink}.
   *
   * @throws DagCborException when it is not strict DAG-CBOR
   */
  public static void forEachLink(final byte[] block, final Consumer<? super Cid> sink) {
    DECODER.forEachLink(block, sink);
  }

  /** The CIDv1 (dag-cbor, sha2-256) of block bytes exactly as given. */
  public static Cid cid(final byte[] block) {
    return Cid.v1(Multicodec.DAG_CBOR, Multihash.sha2_256(block));
  }

  /**
   * Where each top-level map value lies in {@code block}; see
   * {@link DagCborDecoder#mapValueSpans}.
   *
   * @throws DagCborException when it is not strict DAG-CBOR or not a map
   */
  public static Map<String, DagCborDecoder.Span> mapValueSpans(final byte[] block) {
    return DECODER.mapValueSpans(block);
  }

  /**
   * The canonical encoding of the top-level map of {@code block} cut down to {@code keys}, built
   * from the received value bytes, not a re-encoding. This is what an OrbitDB entry signature
   * covers: the entry without {@code key}, {@code sig} and {@code identity}. Since the block was
   * validated as canonical, keeping a subset in the same order stays canonical.
   *
   * @throws DagCborException when the block is not a strict DAG-CBOR map or lacks one of
   *     {@code keys}
   */
  public static byte[] selectEntries(final byte[] block, final Collection<String> keys) {
    final Map<String, DagCborDecoder.Span> spans = mapValueSpans(block);
    for (final String key : keys) {
      if (!spans.containsKey(key)) {
        throw new DagCborException("map has no key \"" + key + "\"");
      }
    }
    int count = 0;
    for (final String key : spans.keySet()) {
      if (keys.contains(key)) {
        count++;
      }
    }
    final ByteArrayOutputStream out = new ByteArrayOutputStream(block.length);
    out.writeBytes(DagCborEncoder.mapHeader(count));
    for (final Map.Entry<String, DagCborDecoder.Span> e : spans.entrySet()) {
      if (keys.contains(e.getKey())) {
        // Keys are re-encoded (strings have one canonical form); values are copied verbatim.
        out.writeBytes(DagCborEncoder.encode(new DagCborValue.Text(e.getKey())));
        out.write(block, e.getValue().offset(), e.getValue().length());
      }
    }
    return out.toByteArray();
  }
}
