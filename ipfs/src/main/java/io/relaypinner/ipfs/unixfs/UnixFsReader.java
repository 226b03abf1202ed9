package io.relaypinner.ipfs.unixfs;

import com.google.protobuf.InvalidProtocolBufferException;
import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.ipfs.dagpb.DagPb;
import io.relaypinner.ipfs.dagpb.DagPbException;
import io.relaypinner.ipfs.dagpb.PbLink;
import io.relaypinner.ipfs.dagpb.PbNode;
import io.relaypinner.ipfs.unixfs.UnixFsEntry.Kind;
import io.relaypinner.ipfs.unixfs.UnixFsException.Reason;
import io.relaypinner.ipfs.unixfs.pb.UnixFsProto;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multicodec;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * Reads UnixFS v1 ({@code ipfs/specs} {@code src/unixfs.md}) from a {@link Blockstore}: file
 * bytes (a {@code raw} block, or a dag-pb File whose content is its own {@code Data} followed by
 * its children in link order, to any depth, with raw or dag-pb leaves), byte ranges (subtrees
 * outside the range are skipped by their {@code blocksizes} and never fetched), directory
 * listings and path resolution through plain and HAMT-sharded directories.
 *
 * <p>File bytes are streamed block by block: memory holds one block plus, per tree level, the
 * pending sibling CIDs. Each block is checked against what its parent claimed (a raw child's
 * length, a dag-pb child's {@code filesize}/{@code blocksizes} sum), so a lying DAG fails with
 * {@link Reason#MALFORMED} instead of yielding shifted bytes. Symlinks are never followed.
 * Every failure is a {@link UnixFsException} with a {@link Reason}.
 */
public final class UnixFsReader {
  /** Most path segments {@link #resolve} follows. */
  public static final int MAX_PATH_SEGMENTS = 1024;
  /** The only HAMT hash function in use: murmur3-x64-64. */
  public static final long HAMT_HASH_MURMUR3_X64_64 = 0x22;
  /** Largest HAMT fanout accepted (Kubo and JS use 256; the spec caps it at 1024). */
  public static final long MAX_HAMT_FANOUT = 1024;

  private final Blockstore blockstore;

  /** Reads from a blockstore; never writes to it. */
  public UnixFsReader(final Blockstore blockstore) {
    this.blockstore = Objects.requireNonNull(blockstore, "blockstore");
  }

  /** What a CID is, and its content size when it is a file. */
  public UnixFsEntry stat(final Cid cid) {
    return entryOf(load(cid));
  }

  /**
   * Resolves {@code path} (segments split on {@code /}, empty segments ignored, no percent
   * decoding) under {@code root}, through plain and HAMT-sharded directories.
   *
   * @throws UnixFsException {@link Reason#NOT_FOUND}, {@link Reason#NOT_A_DIRECTORY},
   *     {@link Reason#MISSING_BLOCK}, {@link Reason#MALFORMED} or {@link Reason#UNSUPPORTED}
   */
  public UnixFsEntry resolve(final Cid root, final String path) {
    return resolve(root, path, cid -> { });
  }

  /**
   * Like {@link #resolve(Cid, String)}, telling {@code through} every block the walk reads
   * before the one it ends at, in order: each directory on the path and, in a HAMT-sharded
   * one, every inner shard between its root and the entry (what a verifier needs to follow the
   * path itself, e.g. the blocks a trustless gateway's CAR starts with).
   */
  public UnixFsEntry resolve(final Cid root, final String path, final Consumer<Cid> through) {
    Loaded current = load(root);
    int count = 0;
    for (final String segment : path.split("/", -1)) {
      if (segment.isEmpty()) {
        continue;
      }
      if (++count > MAX_PATH_SEGMENTS) {
        throw new UnixFsException(Reason.UNSUPPORTED, root,
            "path has more than " + MAX_PATH_SEGMENTS + " segments");
      }
      final Kind kind = entryOf(current).kind();
      final Cid child;
      if (kind == Kind.DIRECTORY) {
        through.accept(current.cid);
        child = findInDirectory(current, segment);
      } else if (kind == Kind.HAMT_DIRECTORY) {
        through.accept(current.cid);
        child = findInShard(current, segment, through);
      } else {
        throw new UnixFsException(Reason.NOT_A_DIRECTORY, current.cid,
            "cannot resolve '" + segment + "' inside a " + kind);
      }
      current = load(child);
    }
    return entryOf(current);
  }

  /**
   * Lists a directory; a HAMT shard is walked completely (every sub-shard block is fetched).
   * Entries come in link order (shards: bucket order, not name order).
   */
  public List<DirectoryEntry> list(final Cid directory) {
    final Loaded node = load(directory);
    final Kind kind = entryOf(node).kind();
    final List<DirectoryEntry> out = new ArrayList<>();
    if (kind == Kind.DIRECTORY) {
      for (final PbLink link : node.pb.links()) {
        out.add(new DirectoryEntry(link.nameOrEmpty(), link.hash(), link.tsize()));
      }
    } else if (kind == Kind.HAMT_DIRECTORY) {
      listShard(node, out, 0);
    } else {
      throw new UnixFsException(Reason.NOT_A_DIRECTORY, directory, "is a " + kind);
    }
    return out;
  }

  /** The whole content of a file or raw block. */
  public InputStream open(final Cid file) {
    return open(file, 0, Long.MAX_VALUE);
  }

  /**
   * The bytes {@code [offset, offset + length)} of a file or raw block, clamped to its end (an
   * offset at or past the end gives an empty stream). Blocks are fetched lazily as the stream
   * is read, so {@link UnixFsException} may also come from {@code read}.
   */
  public InputStream open(final Cid file, final long offset, final long length) {
    return new SliceInputStream(slices(file, offset, length));
  }

  /**
   * The content {@code [offset, offset + length)} as read-only slices of successive blocks, in
   * order; the root is checked to be a file before this returns, the rest lazily.
   */
  public Iterator<ByteBuffer> slices(final Cid file, final long offset, final long length) {
    if (offset < 0 || length < 0) {
      throw new IllegalArgumentException("negative offset or length");
    }
    final Loaded root = load(file);
    final UnixFsEntry entry = entryOf(root);
    if (!entry.kind().isFile()) {
      throw new UnixFsException(Reason.NOT_A_FILE, file, "is a " + entry.kind());
    }
    final long end = length > Long.MAX_VALUE - offset ? Long.MAX_VALUE : offset + length;
    return new SliceIterator(root, offset, end);
  }

  // --- blocks ---------------------------------------------------------------------------------

  /** A fetched block: raw bytes, or a dag-pb node with its decoded UnixFS data. */
  private record Loaded(Cid cid, byte[] raw, PbNode pb, UnixFsProto.Data unixfs) {}

  private Loaded load(final Cid cid) {
    final byte[] bytes = blockstore.get(cid).orElseThrow(
        () -> new UnixFsException(Reason.MISSING_BLOCK, cid, "block not in the blockstore"));
    if (cid.codec() == Multicodec.RAW.code()) {
      return new Loaded(cid, bytes, null, null);
    }
    if (cid.codec() != Multicodec.DAG_PB.code()) {
      throw new UnixFsException(Reason.UNSUPPORTED, cid, "codec " + cid.codecName()
          + " is not UnixFS");
    }
    final PbNode node;
    try {
      node = DagPb.decode(bytes);
    } catch (DagPbException e) {
      throw new UnixFsException(Reason.MALFORMED, cid, e.getMessage(), e);
    }
    final byte[] data = node.data().orElseThrow(
        () -> new UnixFsException(Reason.MALFORMED, cid, "dag-pb node has no UnixFS Data"));
    try {
      return new Loaded(cid, null, node, UnixFsProto.Data.parseFrom(data));
    } catch (InvalidProtocolBufferException e) {
      throw new UnixFsException(Reason.MALFORMED, cid, "bad UnixFS Data: " + e.getMessage(), e);
    }
  }

  private static UnixFsEntry entryOf(final Loaded node) {
    if (node.raw != null) {
      return new UnixFsEntry(node.cid, Kind.RAW, node.raw.length);
    }
    return switch (node.unixfs.getType()) {
      case Raw, File -> new UnixFsEntry(node.cid, Kind.FILE, fileLayout(node).total);
      case Directory -> new UnixFsEntry(node.cid, Kind.DIRECTORY, 0);
      case HAMTShard -> new UnixFsEntry(node.cid, Kind.HAMT_DIRECTORY, 0);
      case Symlink -> new UnixFsEntry(node.cid, Kind.SYMLINK, node.unixfs.getData().size());
      case Metadata -> new UnixFsEntry(node.cid, Kind.METADATA, 0);
    };
  }

  /** A file node's inline data length, child sizes and total, validated. */
  private record Layout(long dataLength, long[] childSizes, long total) {}

  private static Layout fileLayout(final Loaded node) {
    final UnixFsProto.Data data = node.unixfs;
    final int links = node.pb.links().size();
    if (data.getBlocksizesCount() != links) {
      throw new UnixFsException(Reason.MALFORMED, node.cid, links + " links but "
          + data.getBlocksizesCount() + " blocksizes");
    }
    final long[] sizes = new long[links];
    long total = data.getData().size();
    for (int i = 0; i < links; i++) {
      sizes[i] = data.getBlocksizes(i);
      if (sizes[i] < 0 || total > Long.MAX_VALUE - sizes[i]) {
        throw new UnixFsException(Reason.MALFORMED, node.cid, "blocksizes overflow");
      }
      total += sizes[i];
    }
    if (data.hasFilesize() && data.getFilesize() != total) {
      throw new UnixFsException(Reason.MALFORMED, node.cid, "filesize "
          + Long.toUnsignedString(data.getFilesize()) + " but data and blocksizes add to "
          + total);
    }
    return new Layout(data.getData().size(), sizes, total);
  }

  // --- directories ----------------------------------------------------------------------------

  private static Cid findInDirectory(final Loaded dir, final String name) {
    for (final PbLink link : dir.pb.links()) {
      if (link.name().isPresent() && link.name().get().equals(name)) {
        return link.hash();
      }
    }
    throw new UnixFsException(Reason.NOT_FOUND, dir.cid, "no entry '" + name + "'");
  }

  /** Shard parameters of one HAMT node. */
  private record Shard(int bits, int padLength) {}

  private static Shard shardOf(final Loaded node) {
    final UnixFsProto.Data data = node.unixfs;
    if (data.getType() != UnixFsProto.Data.DataType.HAMTShard) {
      throw new UnixFsException(Reason.MALFORMED, node.cid, "HAMT child is a "
          + data.getType() + ", not a HAMTShard");
    }
    if (data.getHashType() != HAMT_HASH_MURMUR3_X64_64) {
      throw new UnixFsException(Reason.UNSUPPORTED, node.cid, "HAMT hashType 0x"
          + Long.toHexString(data.getHashType()));
    }
    final long fanout = data.getFanout();
    if (fanout < 2 || fanout > MAX_HAMT_FANOUT || Long.bitCount(fanout) != 1) {
      throw new UnixFsException(Reason.MALFORMED, node.cid, "HAMT fanout " + fanout
          + " is not a power of two in [2, " + MAX_HAMT_FANOUT + "]");
    }
    return new Shard(Long.numberOfTrailingZeros(fanout),
        Long.toHexString(fanout - 1).length());
  }

  /**
   * Walks shard levels as {@code ipfs-unixfs-exporter} {@code find-cid-in-shard} does: the
   * bucket index at each level is the next log2(fanout) bits of murmur3-x64-64(name), most
   * significant first; a link named exactly the upper-case hex index is a sub-shard, one named
   * index + name is the entry.
   */
  private Cid findInShard(final Loaded root, final String name, final Consumer<Cid> through) {
    final long hash = Murmur3.hash64(name.getBytes(StandardCharsets.UTF_8));
    Loaded node = root;
    int consumed = 0;
    while (true) {
      final Shard shard = shardOf(node);
      if (consumed + shard.bits > Long.SIZE) {
        // JS would rehash here; no real shard gets this deep (2^64 names at fanout 256).
        throw new UnixFsException(Reason.UNSUPPORTED, node.cid, "HAMT deeper than 64 hash bits");
      }
      final int index = (int) ((hash << consumed) >>> (Long.SIZE - shard.bits));
      consumed += shard.bits;
      final String prefix = hexPrefix(index, shard.padLength);
      Loaded next = null;
      for (final PbLink link : node.pb.links()) {
        final String linkName = link.nameOrEmpty();
        if (!linkName.startsWith(prefix)) {
          continue;
        }
        if (linkName.length() == shard.padLength) {
          next = load(link.hash());
          through.accept(next.cid);
          break;
        }
        if (linkName.substring(shard.padLength).equals(name)) {
          return link.hash();
        }
      }
      if (next == null) {
        throw new UnixFsException(Reason.NOT_FOUND, root.cid, "no entry '" + name + "'");
      }
      node = next;
    }
  }

  private void listShard(final Loaded node, final List<DirectoryEntry> out, final int depth) {
    final Shard shard = shardOf(node);
    if ((depth + 1) * shard.bits > Long.SIZE) {
      throw new UnixFsException(Reason.UNSUPPORTED, node.cid, "HAMT deeper than 64 hash bits");
    }
    for (final PbLink link : node.pb.links()) {
      final String linkName = link.nameOrEmpty();
      if (linkName.length() < shard.padLength) {
        throw new UnixFsException(Reason.MALFORMED, node.cid, "HAMT link name '" + linkName
            + "' shorter than its " + shard.padLength + "-digit prefix");
      }
      if (linkName.length() == shard.padLength) {
        listShard(load(link.hash()), out, depth + 1);
      } else {
        out.add(new DirectoryEntry(linkName.substring(shard.padLength), link.hash(),
            link.tsize()));
      }
    }
  }

  private static String hexPrefix(final int index, final int padLength) {
    final String hex = Integer.toHexString(index).toUpperCase(Locale.ROOT);
    return "0".repeat(Math.max(0, padLength - hex.length())) + hex;
  }

  // --- file content ---------------------------------------------------------------------------

  /** A block still to visit, at an absolute content offset, with the size its parent claimed. */
  private record Pending(Cid cid, long start, long size) {}

  /** Depth-first, left-to-right walk of a file DAG that yields the slices inside the range. */
  private final class SliceIterator implements Iterator<ByteBuffer> {
    private final Deque<Pending> pending = new ArrayDeque<>();
    private final long from;
    private final long to;
    private Loaded first;
    private ByteBuffer next;

    SliceIterator(final Loaded root, final long from, final long to) {
      this.first = root;
      this.from = from;
      this.to = to;
    }

    @Override
    public boolean hasNext() {
      while (next == null && (first != null || !pending.isEmpty())) {
        if (first != null) {
          final Loaded root = first;
          first = null;
          visit(root, 0, -1);
        } else {
          final Pending item = pending.pop();
          visit(load(item.cid), item.start, item.size);
        }
      }
      return next != null;
    }

    @Override
    public ByteBuffer next() {
      if (!hasNext()) {
        throw new NoSuchElementException();
      }
      final ByteBuffer out = next;
      next = null;
      return out;
    }

    private void visit(final Loaded node, final long start, final long claimed) {
      if (node.raw != null) {
        checkClaim(node, claimed, node.raw.length);
        emit(node.raw, 0, node.raw.length, start);
        return;
      }
      final UnixFsProto.Data.DataType type = node.unixfs.getType();
      if (type != UnixFsProto.Data.DataType.File && type != UnixFsProto.Data.DataType.Raw) {
        throw new UnixFsException(Reason.MALFORMED, node.cid, "file DAG contains a " + type);
      }
      final Layout layout = fileLayout(node);
      checkClaim(node, claimed, layout.total);
      long childStart = start + layout.total;
      final List<PbLink> links = node.pb.links();
      for (int i = links.size() - 1; i >= 0; i--) {
        childStart -= layout.childSizes[i];
        final long size = layout.childSizes[i];
        if (size > 0 && childStart < to && childStart + size > from) {
          pending.push(new Pending(links.get(i).hash(), childStart, size));
        }
      }
      if (layout.dataLength > 0) {
        final byte[] inline = node.unixfs.getData().toByteArray();
        emit(inline, 0, inline.length, start);
      }
    }

    private void checkClaim(final Loaded node, final long claimed, final long actual) {
      if (claimed >= 0 && claimed != actual) {
        throw new UnixFsException(Reason.MALFORMED, node.cid, "parent claims " + claimed
            + " bytes but the block holds " + actual);
      }
    }

    private void emit(final byte[] bytes, final int offset, final int length, final long start) {
      final long lo = Math.max(start, from);
      final long hi = Math.min(start + length, to);
      if (lo < hi) {
        next = ByteBuffer.wrap(bytes, offset + (int) (lo - start), (int) (hi - lo))
            .asReadOnlyBuffer();
      }
    }
  }

  /** An {@link InputStream} over successive slices. */
  private static final class SliceInputStream extends InputStream {
    private final Iterator<ByteBuffer> slices;
    private ByteBuffer current = ByteBuffer.allocate(0);

    SliceInputStream(final Iterator<ByteBuffer> slices) {
      this.slices = slices;
    }

    private boolean fill() {
      while (!current.hasRemaining()) {
        if (!slices.hasNext()) {
          return false;
        }
        current = slices.next();
      }
      return true;
    }

    @Override
    public int read() {
      return fill() ? current.get() & 0xFF : -1;
    }

    @Override
    public int read(final byte[] dst, final int offset, final int length) {
      Objects.checkFromIndexSize(offset, length, dst.length);
      if (length == 0) {
        return 0;
      }
      if (!fill()) {
        return -1;
      }
      final int count = Math.min(length, current.remaining());
      current.get(dst, offset, count);
      return count;
    }

    @Override
    public int available() {
      return current.remaining();
    }
  }
}
