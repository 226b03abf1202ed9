package io.relaypinner.cli;

import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.ipfs.unixfs.UnixFsImporter;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.Multihash;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.stream.IntStream;

/**
 * Large UnixFS files that are never held: file {@code f} is {@code leaves} raw leaves of
 * {@link #LEAF} bytes each ({@link #leaf}: generated from {@code (f, i)}, distinct everywhere)
 * under one dag-pb File node, imported as {@code @helia/unixfs} imports them
 * ({@link UnixFsImporter.Options#HELIA}). Building hashes every leaf once (the root needs
 * their CIDs) and keeps only the CIDs and the dag-pb nodes (~8 KiB per 200 leaves); as a
 * {@link Blockstore} (read-only) it generates a leaf again whenever one is read, so a peer
 * serves gigabytes over bitswap from a few hundred KiB of heap and no disk.
 */
final class GeneratedDags implements Blockstore {
  /** Bytes of one leaf: 1 MiB, the Helia chunk. */
  static final int LEAF = 1 << 20;

  private record Leaf(int file, int index) {}

  private final int leaves;
  private final Cid[] roots;
  private final Map<Multihash, Leaf> leafKeys = new ConcurrentHashMap<>();
  private final Map<Multihash, byte[]> nodes = new ConcurrentHashMap<>();
  private final AtomicLong leafBytesRead = new AtomicLong();

  /** Builds {@code files} files of {@code leaves} leaves each (on the common pool). */
  GeneratedDags(final int files, final int leaves) {
    this.leaves = leaves;
    this.roots = new Cid[files];
    IntStream.range(0, files).parallel().forEach(f ->
        roots[f] = new UnixFsImporter(recorder(f), UnixFsImporter.Options.HELIA)
            .importStream(content(f)));
  }

  /** The root of file {@code f}. */
  Cid root(final int f) {
    return roots[f];
  }

  /** Bytes of one file. */
  long fileSize() {
    return (long) leaves * LEAF;
  }

  /** Leaf bytes read from this store so far (what a peer serving it sent, about). */
  long leafBytesRead() {
    return leafBytesRead.get();
  }

  /**
   * Leaf {@code i} of file {@code f}: its coordinates, then an xorshift stream seeded from them
   * (cheap to make: the test's time goes to hashing and sending, not to generating).
   */
  static byte[] leaf(final int f, final int i) {
    final byte[] data = new byte[LEAF];
    final ByteBuffer out = ByteBuffer.wrap(data);
    out.putInt(f).putInt(i);
    long x = (((long) f << 32) | i) * 0x9E3779B97F4A7C15L + 1;
    while (out.remaining() >= Long.BYTES) {
      x ^= x << 13;
      x ^= x >>> 7;
      x ^= x << 17;
      out.putLong(x);
    }
    return data;
  }

  /** The content of file {@code f}, leaf after leaf, generated as it is read. */
  static InputStream content(final int f, final int leaves) {
    return new InputStream() {
      private byte[] current = new byte[0];
      private int position;
      private int next;

      private boolean fill() {
        if (position < current.length) {
          return true;
        }
        if (next == leaves) {
          return false;
        }
        current = leaf(f, next++);
        position = 0;
        return true;
      }

      @Override
      public int read() {
        return fill() ? current[position++] & 0xff : -1;
      }

      @Override
      public int read(final byte[] buffer, final int offset, final int length) {
        if (length == 0) {
          return 0;
        }
        if (!fill()) {
          return -1;
        }
        final int n = Math.min(length, current.length - position);
        System.arraycopy(current, position, buffer, offset, n);
        position += n;
        return n;
      }
    };
  }

  private InputStream content(final int f) {
    return content(f, leaves);
  }

  /** Where the importer of file {@code f} puts its blocks: leaves are noted, nodes kept. */
  private Blockstore recorder(final int f) {
    return new Sink() {
      private int nextLeaf;

      @Override
      public void put(final Cid cid, final byte[] data) {
        if (cid.codec() == Multicodec.RAW.code()) {
          leafKeys.put(cid.multihash(), new Leaf(f, nextLeaf++));
        } else {
          nodes.put(cid.multihash(), data.clone());
        }
      }
    };
  }

  @Override
  public boolean has(final Cid cid) {
    return leafKeys.containsKey(cid.multihash()) || nodes.containsKey(cid.multihash());
  }

  @Override
  public Optional<byte[]> get(final Cid cid) {
    final byte[] node = nodes.get(cid.multihash());
    if (node != null) {
      return Optional.of(node.clone());
    }
    final Leaf leaf = leafKeys.get(cid.multihash());
    if (leaf == null) {
      return Optional.empty();
    }
    leafBytesRead.addAndGet(LEAF);
    return Optional.of(leaf(leaf.file(), leaf.index()));
  }

  @Override
  public Optional<Integer> size(final Cid cid) {
    final byte[] node = nodes.get(cid.multihash());
    if (node != null) {
      return Optional.of(node.length);
    }
    return leafKeys.containsKey(cid.multihash()) ? Optional.of(LEAF) : Optional.empty();
  }

  @Override
  public void put(final Cid cid, final byte[] data) {
    throw new UnsupportedOperationException("generated, read-only");
  }

  @Override
  public boolean delete(final Cid cid) {
    throw new UnsupportedOperationException("generated, read-only");
  }

  @Override
  public void forEachKey(final Consumer<Cid> visitor) {
    leafKeys.keySet().forEach(mh -> visitor.accept(Cid.v1(Multicodec.RAW, mh)));
    nodes.keySet().forEach(mh -> visitor.accept(Cid.v1(Multicodec.DAG_PB, mh)));
  }

  /** A blockstore that only takes puts (the importer's output) and holds nothing. */
  private abstract static class Sink implements Blockstore {
    @Override
    public boolean has(final Cid cid) {
      return false;
    }

    @Override
    public Optional<byte[]> get(final Cid cid) {
      return Optional.empty();
    }

    @Override
    public Optional<Integer> size(final Cid cid) {
      return Optional.empty();
    }

    @Override
    public boolean delete(final Cid cid) {
      return false;
    }

    @Override
    public void forEachKey(final Consumer<Cid> visitor) {
      // Nothing is kept here.
    }
  }
}
