package io.relaypinner.ipfs.unixfs;

import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.ipfs.dagpb.DagPb;
import io.relaypinner.ipfs.dagpb.PbLink;
import io.relaypinner.ipfs.dagpb.PbNode;
import io.relaypinner.ipfs.unixfs.pb.UnixFsProto;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.Multihash;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Imports a byte stream as a UnixFS v1 file ({@code ipfs/specs} {@code src/unixfs.md}) exactly as
 * {@code ipfs-unixfs-importer} does with {@code rawLeaves: true, cidVersion: 1}, a
 * {@code fixedSize} chunker and the {@code balanced} layout, so the root CID equals the one
 * {@code @helia/unixfs} {@code addBytes}/{@code addByteStream} returns for the same bytes and
 * options ({@link Options#HELIA}: 1 MiB chunks, 1024 children per node).
 *
 * <ul>
 *   <li>Each chunk is a CIDv1 {@code raw} block (sha2-256). A stream of one chunk (including the
 *       empty stream: one empty chunk) is just that raw block.
 *   <li>Otherwise leaves are grouped in order, {@code maxChildrenPerNode} at a time, under CIDv1
 *       dag-pb File nodes; the parents are grouped the same way, level by level, until one
 *       node is left. A trailing group of one still gets its own parent (as in JS).
 *   <li>A parent's UnixFS {@code Data} is {@code Type=File}, {@code filesize} = content length
 *       and one {@code blocksizes} entry per child (its content length), no inline data. Its
 *       links have an empty (present) {@code Name} and {@code Tsize} = the child's block length
 *       for raw leaves, or the child's block length plus its links' Tsizes for parents.
 * </ul>
 *
 * <p>Blocks go to the blockstore as they are made. Memory: one chunk, the next chunk (to tell a
 * single-chunk file), and per tree level at most {@code maxChildrenPerNode} pending links.
 */
public final class UnixFsImporter {
  /** Chunking and layout options. */
  public record Options(int chunkSize, int maxChildrenPerNode) {
    /** The {@code @helia/unixfs} 5.x and 7.x defaults: 1 MiB chunks, 1024 links per node. */
    public static final Options HELIA = new Options(1_048_576, 1024);
    /** The bare {@code ipfs-unixfs-importer} defaults: 256 KiB chunks, 174 links per node. */
    public static final Options IMPORTER = new Options(262_144, 174);

    /** Validates. */
    public Options {
      if (chunkSize < 1 || chunkSize > 2 * 1024 * 1024) {
        throw new IllegalArgumentException("chunkSize must be in [1, 2 MiB]: " + chunkSize);
      }
      if (maxChildrenPerNode < 2 || maxChildrenPerNode > 8192) {
        throw new IllegalArgumentException(
            "maxChildrenPerNode must be in [2, 8192]: " + maxChildrenPerNode);
      }
    }
  }

  /**
   * A built node as its parent sees it.
   *
   * @param cid the block
   * @param contentSize file bytes under it (the parent's {@code blocksizes} entry)
   * @param tsize the parent's link {@code Tsize}
   */
  private record Child(Cid cid, long contentSize, long tsize) {}

  private final Blockstore blockstore;
  private final Options options;

  /** Writes to {@code blockstore} with {@code options}. */
  public UnixFsImporter(final Blockstore blockstore, final Options options) {
    this.blockstore = Objects.requireNonNull(blockstore, "blockstore");
    this.options = Objects.requireNonNull(options, "options");
  }

  /** Imports bytes already in memory. */
  public Cid importBytes(final byte[] content) {
    return importStream(new ByteArrayInputStream(content));
  }

  /**
   * Imports a stream to its end (the stream is not closed) and returns the root CID.
   *
   * @throws UncheckedIOException when reading fails
   */
  public Cid importStream(final InputStream content) {
    try {
      byte[] chunk = content.readNBytes(options.chunkSize());
      byte[] following = chunk.length < options.chunkSize()
          ? new byte[0] : content.readNBytes(options.chunkSize());
      if (following.length == 0) {
        return putRaw(chunk).cid();
      }
      final List<List<Child>> levels = new ArrayList<>();
      while (chunk.length > 0) {
        add(levels, 0, putRaw(chunk));
        chunk = following;
        following = chunk.length < options.chunkSize()
            ? new byte[0] : content.readNBytes(options.chunkSize());
      }
      return finish(levels);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private void add(final List<List<Child>> levels, final int level, final Child child) {
    if (levels.size() == level) {
      levels.add(new ArrayList<>());
    }
    final List<Child> pending = levels.get(level);
    pending.add(child);
    if (pending.size() == options.maxChildrenPerNode()) {
      final Child parent = putParent(pending);
      pending.clear();
      add(levels, level + 1, parent);
    }
  }

  private Cid finish(final List<List<Child>> levels) {
    for (int level = 0; ; level++) {
      final List<Child> pending = levels.get(level);
      final boolean top = level == levels.size() - 1;
      if (top && pending.size() == 1) {
        return pending.get(0).cid();
      }
      if (!pending.isEmpty()) {
        final Child parent = putParent(pending);
        pending.clear();
        if (top) {
          levels.add(new ArrayList<>());
        }
        levels.get(level + 1).add(parent);
      }
    }
  }

  private Child putRaw(final byte[] chunk) {
    final Cid cid = Cid.v1(Multicodec.RAW, Multihash.sha2_256(chunk));
    blockstore.put(cid, chunk);
    return new Child(cid, chunk.length, chunk.length);
  }

  private Child putParent(final List<Child> children) {
    final UnixFsProto.Data.Builder data = UnixFsProto.Data.newBuilder()
        .setType(UnixFsProto.Data.DataType.File);
    final List<PbLink> links = new ArrayList<>(children.size());
    long fileSize = 0;
    long linkSizes = 0;
    for (final Child child : children) {
      data.addBlocksizes(child.contentSize());
      fileSize += child.contentSize();
      linkSizes += child.tsize();
      links.add(PbLink.of(child.cid(), "", child.tsize()));
    }
    data.setFilesize(fileSize);
    final byte[] block = DagPb.encode(
        PbNode.of(data.build().toByteArray(), links));
    final Cid cid = DagPb.cidOf(block);
    blockstore.put(cid, block);
    return new Child(cid, fileSize, block.length + linkSizes);
  }
}
