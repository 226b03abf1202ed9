package io.relaypinner.ipfs.pin;

import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multihash;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Test fixture, not a real IPLD codec: a block is a label byte string followed by the binary CIDs
 * of its children, concatenated. Its multicodec code is in the private-use range, so it cannot
 * clash with dag-pb or dag-cbor, whose real link resolvers are plugged in at integration. Leaves
 * are plain {@code raw} blocks.
 *
 * <pre>
 *   block = u8(label length) ‖ label ‖ cid_1 ‖ cid_2 ‖ …
 * </pre>
 */
final class TestListCodec {
  /** A private-use multicodec code (0x300000–0x3fffff are reserved for private use). */
  static final int CODE = 0x300000;

  private TestListCodec() {}

  /** The resolver used by the pin tests: raw (no links) plus this codec. */
  static CodecLinkResolver resolver() {
    return CodecLinkResolver.standard().toBuilder().codec(CODE, TestListCodec::links).build();
  }

  static byte[] encode(final String label, final List<Cid> children) {
    final byte[] text = label.getBytes(StandardCharsets.UTF_8);
    final ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write(text.length);
    out.writeBytes(text);
    for (final Cid child : children) {
      out.writeBytes(child.bytes());
    }
    return out.toByteArray();
  }

  static Cid cidOf(final byte[] block) {
    return Cid.v1(CODE, Multihash.sha2_256(block));
  }

  static List<Cid> links(final Cid cid, final byte[] block) {
    final List<Cid> children = new ArrayList<>();
    int pos = 1 + (block[0] & 0xff);
    while (pos < block.length) {
      final Cid.Decoded decoded = Cid.read(block, pos, block.length);
      children.add(decoded.cid());
      pos += decoded.length();
    }
    return children;
  }
}
