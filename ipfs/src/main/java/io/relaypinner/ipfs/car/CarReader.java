package io.relaypinner.ipfs.car;

import io.relaypinner.ipfs.blockstore.Blocks;
import io.relaypinner.ipfs.blockstore.InvalidBlockException;
import io.relaypinner.ipfs.dagcbor.DagCbor;
import io.relaypinner.ipfs.dagcbor.DagCborException;
import io.relaypinner.ipfs.dagcbor.DagCborValue;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.MultiformatException;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Streaming CAR v1 reader with hard bounds: the header is at most {@link Limits#maxHeaderBytes}
 * with at most {@link Limits#maxRoots} roots, each section at most {@link Blocks#MAX_BLOCK_SIZE}
 * of data, at most {@link Limits#maxBlocks} sections and {@link Limits#maxTotalBytes} bytes in all.
 * Every block is checked against its CID (cheap checks first, the hash last) before it is
 * returned, so a caller never sees a block that does not match. Reads one section at a time:
 * memory is one block.
 */
public final class CarReader {
  /** Bounds on one CAR. */
  public record Limits(int maxHeaderBytes, int maxRoots, long maxBlocks, long maxTotalBytes) {
    /** Generous bounds for a database export: 1 MiB of header, 1 M blocks, 8 GiB. */
    public static final Limits DEFAULT = new Limits(1 << 20, 1024, 1_000_000, 8L << 30);

    /** Validates. */
    public Limits {
      if (maxHeaderBytes <= 0 || maxRoots < 0 || maxBlocks <= 0 || maxTotalBytes <= 0) {
        throw new IllegalArgumentException("CAR limits must be positive");
      }
    }
  }

  private static final int MAX_CID_BYTES = 2 + 9 + 9 + 128;

  private final InputStream in;
  private final Limits limits;
  private final List<Cid> roots;
  private long blocks;
  private long consumed;

  /**
   * Reads and checks the header.
   *
   * @throws CarFormatException when it is not a CAR v1 header within the limits
   * @throws IOException when the stream fails
   */
  public CarReader(final InputStream in, final Limits limits) throws IOException {
    this.in = Objects.requireNonNull(in, "in");
    this.limits = Objects.requireNonNull(limits, "limits");
    final long headerLength = readVarint(true);
    if (headerLength <= 0 || headerLength > limits.maxHeaderBytes()) {
      throw new CarFormatException("CAR header of " + headerLength + " bytes (limit "
          + limits.maxHeaderBytes() + ")");
    }
    final byte[] header = readFully((int) headerLength);
    final DagCborValue value;
    try {
      value = DagCbor.decode(header);
    } catch (final DagCborException e) {
      throw new CarFormatException("CAR header is not DAG-CBOR: " + e.getMessage(), e);
    }
    try {
      final DagCborValue.Map map = value.asMap();
      final DagCborValue version = map.entries().get("version");
      if (version == null || version.asLong() != 1) {
        throw new CarFormatException("not a CAR v1 (version " + version + ")");
      }
      final DagCborValue rootsValue = map.entries().get("roots");
      if (rootsValue == null) {
        throw new CarFormatException("CAR v1 header without roots");
      }
      final DagCborValue.List list = rootsValue.asList();
      if (list.size() > limits.maxRoots()) {
        throw new CarFormatException("CAR header with " + list.size() + " roots (limit "
            + limits.maxRoots() + ")");
      }
      final List<Cid> parsed = new ArrayList<>(list.size());
      for (int i = 0; i < list.size(); i++) {
        parsed.add(list.get(i).asLink());
      }
      this.roots = List.copyOf(parsed);
    } catch (final DagCborException e) {
      throw new CarFormatException("bad CAR v1 header: " + e.getMessage(), e);
    }
  }

  /** The header's roots. */
  public List<Cid> roots() {
    return roots;
  }

  /** Sections read so far. */
  public long blocks() {
    return blocks;
  }

  /**
   * The next verified block, or empty at a clean end of stream.
   *
   * @throws CarFormatException on a malformed or oversize section, a block that does not match
   *     its CID, or a stream that ends inside a section
   */
  public Optional<CarBlock> next() throws IOException {
    final long length = readVarint(false);
    if (length < 0) {
      return Optional.empty();
    }
    if (++blocks > limits.maxBlocks()) {
      throw new CarFormatException("CAR holds more than " + limits.maxBlocks() + " blocks");
    }
    if (length == 0 || length > Blocks.MAX_BLOCK_SIZE + (long) MAX_CID_BYTES) {
      throw new CarFormatException("CAR section of " + length + " bytes");
    }
    if (consumed + length > limits.maxTotalBytes()) {
      throw new CarFormatException("CAR larger than " + limits.maxTotalBytes() + " bytes");
    }
    final byte[] section = readFully((int) length);
    final Cid.Decoded decoded;
    try {
      decoded = Cid.read(section, 0, section.length);
    } catch (final MultiformatException e) {
      throw new CarFormatException("bad CID in CAR section " + blocks + ": " + e.getMessage(), e);
    }
    final byte[] data = new byte[section.length - decoded.length()];
    System.arraycopy(section, decoded.length(), data, 0, data.length);
    try {
      Blocks.verify(decoded.cid(), data);
    } catch (final InvalidBlockException e) {
      throw new CarFormatException("CAR section " + blocks + ": " + e.getMessage(), e);
    }
    return Optional.of(new CarBlock(decoded.cid(), data));
  }

  /** A varint; -1 at a clean end of stream when {@code required} is false. */
  private long readVarint(final boolean required) throws IOException {
    long value = 0;
    for (int i = 0; i < 9; i++) {
      final int b = in.read();
      if (b < 0) {
        if (i == 0 && !required) {
          return -1;
        }
        throw new CarFormatException("CAR ends inside a length prefix");
      }
      consumed++;
      if (i > 0 && b == 0) {
        throw new CarFormatException("non-minimal varint in CAR");
      }
      value |= (long) (b & 0x7f) << (7 * i);
      if ((b & 0x80) == 0) {
        return value;
      }
    }
    throw new CarFormatException("varint longer than 9 bytes in CAR");
  }

  private byte[] readFully(final int length) throws IOException {
    final byte[] out = in.readNBytes(length);
    if (out.length != length) {
      throw new CarFormatException("CAR ends inside a section (" + out.length + " of " + length
          + " bytes)");
    }
    consumed += length;
    return out;
  }
}
