package io.relaypinner.ipfs.car;

import io.relaypinner.ipfs.dagcbor.DagCbor;
import io.relaypinner.ipfs.dagcbor.DagCborValue;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Uvarint;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * CAR v1 encoding (ipld.io/specs/transport/car/carv1): a varint-prefixed DAG-CBOR header
 * {@code {roots: [CID…], version: 1}}, then sections {@code varint(len(cid)+len(data)) cid data}.
 *
 * <p>The static methods produce the pieces (so a streaming sender can compute the exact length
 * up front with {@link #headerLength} and {@link #sectionLength}, then send block by block); an
 * instance writes a whole CAR to an {@link OutputStream}. Identity-hash CIDs are written like any
 * other when given; the trustless gateway leaves them out before it gets here.
 */
public final class CarWriter implements AutoCloseable {
  private final OutputStream out;
  private long written;

  /** Writes the header for {@code roots} to {@code out} at once. */
  public CarWriter(final OutputStream out, final List<Cid> roots) throws IOException {
    this.out = Objects.requireNonNull(out, "out");
    final byte[] header = header(roots);
    out.write(header);
    written = header.length;
  }

  /** Appends one section. */
  public void write(final Cid cid, final byte[] data) throws IOException {
    final byte[] prefix = sectionPrefix(cid, data.length);
    out.write(prefix);
    out.write(data);
    written += prefix.length + data.length;
  }

  /** Bytes written so far, header included. */
  public long written() {
    return written;
  }

  /** Flushes; the underlying stream stays open (it belongs to the caller). */
  @Override
  public void close() throws IOException {
    out.flush();
  }

  /** The header with its varint length prefix. */
  public static byte[] header(final List<Cid> roots) {
    final List<DagCborValue> links = new ArrayList<>(roots.size());
    for (final Cid root : roots) {
      links.add(DagCborValue.of(root));
    }
    final byte[] body = DagCbor.encode(DagCborValue.map(Map.of(
        "roots", DagCborValue.list(links), "version", DagCborValue.of(1L))));
    final byte[] out = new byte[Uvarint.size(body.length) + body.length];
    final int at = Uvarint.write(body.length, out, 0);
    System.arraycopy(body, 0, out, at, body.length);
    return out;
  }

  /** The length of {@link #header(List)} for {@code roots}. */
  public static long headerLength(final List<Cid> roots) {
    return header(roots).length;
  }

  /** A section's varint length and CID, to be followed by {@code dataLength} bytes of data. */
  public static byte[] sectionPrefix(final Cid cid, final int dataLength) {
    final byte[] cidBytes = cid.bytes();
    final long length = (long) cidBytes.length + dataLength;
    final byte[] out = new byte[Uvarint.size(length) + cidBytes.length];
    final int at = Uvarint.write(length, out, 0);
    System.arraycopy(cidBytes, 0, out, at, cidBytes.length);
    return out;
  }

  /** The whole section (prefix and data) in one buffer, ready to send. */
  public static ByteBuffer section(final Cid cid, final byte[] data) {
    final byte[] prefix = sectionPrefix(cid, data.length);
    final byte[] out = new byte[prefix.length + data.length];
    System.arraycopy(prefix, 0, out, 0, prefix.length);
    System.arraycopy(data, 0, out, prefix.length, data.length);
    return ByteBuffer.wrap(out);
  }

  /** How many bytes the section of a {@code dataLength}-byte block under {@code cid} takes. */
  public static long sectionLength(final Cid cid, final long dataLength) {
    final long length = cid.encodedLength() + dataLength;
    return Uvarint.size(length) + length;
  }
}
