package io.relaypinner.relay.gateway;

import com.google.protobuf.InvalidProtocolBufferException;
import io.relaypinner.ipfs.blockstore.Blocks;
import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.ipfs.car.CarWriter;
import io.relaypinner.ipfs.dagpb.DagPb;
import io.relaypinner.ipfs.dagpb.PbLink;
import io.relaypinner.ipfs.dagpb.PbNode;
import io.relaypinner.ipfs.pin.LinkResolver;
import io.relaypinner.ipfs.unixfs.pb.UnixFsProto;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.relay.gateway.TrustlessRequest.EntityBytes;
import io.relaypinner.relay.gateway.TrustlessRequest.Scope;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * Decides which blocks a trustless-gateway CAR holds, in depth-first order, before the first
 * byte is sent: so the answer has an exact {@code Content-Length}, and a DAG over the limits is
 * refused with a clear error instead of a cut-off stream. Reads links from the blockstore; leaf
 * ({@code raw}) blocks are only sized, not read. No Netty, no threads: callers run it on the
 * storage executor.
 *
 * <ul>
 *   <li>{@code block}: the terminal block only.
 *   <li>{@code entity}: a UnixFS file's whole DAG (only the blocks covering the
 *       {@code entity-bytes} range when given); a directory's own block (a HAMT directory with its
 *       inner shards); any other block alone.
 *   <li>{@code all}: the whole DAG under the terminal block.
 * </ul>
 * Blocks that resolve a path come first. Identity CIDs are never included. With {@code dups=n}
 * each CID appears once; with {@code dups=y} every time the walk meets it (the block limit bounds
 * that too). A missing block ends the plan there ({@link Plan#complete()} false): the spec lets
 * the gateway end the stream, and clients verify completeness.
 */
public final class CarPlanner {
  /** A CAR the limits refuse (the client can ask for less: {@code dag-scope}, ranges). */
  public static final class TooLargeException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public TooLargeException(final String message) {
      super(message, null, false, false);
    }
  }

  /** The terminal block is not in the blockstore. */
  public static final class RootMissingException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    RootMissingException(final Cid cid) {
      super(cid + " is not held here", null, false, false);
    }
  }

  /**
   * The blocks to send, in order, with their sizes and the CAR's exact length.
   *
   * @param complete false when a missing block cut the walk short
   */
  public record Plan(List<Cid> roots, List<Cid> blocks, long[] sizes, long length,
      boolean complete) {}

  /** Bounds on one CAR. */
  public record Limits(long maxBlocks, long maxBytes) {
    /** 100,000 blocks and 2 GiB. */
    public static final Limits DEFAULT = new Limits(100_000, 2L << 30);

    /** Validates. */
    public Limits {
      if (maxBlocks <= 0 || maxBytes <= 0) {
        throw new IllegalArgumentException("CAR limits must be positive");
      }
    }
  }

  private final Blockstore blockstore;
  private final LinkResolver resolver;
  private final Limits limits;

  public CarPlanner(final Blockstore blockstore, final LinkResolver resolver,
      final Limits limits) {
    this.blockstore = Objects.requireNonNull(blockstore, "blockstore");
    this.resolver = Objects.requireNonNull(resolver, "resolver");
    this.limits = Objects.requireNonNull(limits, "limits");
  }

  public Limits limits() {
    return limits;
  }

  /**
   * Plans the CAR for {@code terminal} reached through {@code pathBlocks}, with
   * {@code requested} as the header's root.
   *
   * @throws RootMissingException when {@code terminal} is not held
   * @throws TooLargeException when the CAR would pass a limit
   * @throws TrustlessRequest.BadRequest when {@code entity-bytes} lies outside the file
   */
  public Plan plan(final Cid requested, final List<Cid> pathBlocks, final Cid terminal,
      final Scope scope, final Optional<EntityBytes> range, final boolean dups)
      throws TrustlessRequest.BadRequest {
    final Builder out = new Builder(requested, dups);
    for (final Cid cid : pathBlocks) {
      if (!out.add(cid, blockstore.size(cid))) {
        return out.build(false);
      }
    }
    final Optional<byte[]> root = blockstore.get(terminal);
    if (root.isEmpty()) {
      throw new RootMissingException(terminal);
    }
    out.add(terminal, Optional.of(root.get().length));
    final boolean complete = switch (scope) {
      case BLOCK -> true;
      case ALL -> walk(out, terminal, root.get(), null);
      case ENTITY -> entity(out, terminal, root.get(), range);
    };
    return out.build(complete);
  }

  /** {@code dag-scope=entity}: the children of the terminal block that belong to it. */
  private boolean entity(final Builder out, final Cid cid, final byte[] block,
      final Optional<EntityBytes> range) throws TrustlessRequest.BadRequest {
    if (cid.codec() == Multicodec.RAW.code()) {
      if (range.isPresent()) {
        range.get().resolve(block.length);
      }
      return true;
    }
    if (cid.codec() != Multicodec.DAG_PB.code()) {
      return true;
    }
    final UnixFsProto.Data data = unixfs(block);
    if (data == null) {
      return true;
    }
    return switch (data.getType()) {
      case File, Raw -> {
        if (range.isEmpty()) {
          yield walk(out, cid, block, null);
        }
        final Optional<long[]> span = range.get().resolve(fileSize(data));
        yield span.isEmpty() || walk(out, cid, block, span.get());
      }
      case HAMTShard -> shards(out, block, data);
      default -> true;
    };
  }

  /** The inner shards of a HAMT directory (links whose name is only the hex index). */
  private boolean shards(final Builder out, final byte[] block, final UnixFsProto.Data data) {
    final Deque<byte[]> pending = new ArrayDeque<>();
    pending.push(block);
    final int padLength = Long.toHexString(Math.max(1, data.getFanout()) - 1).length();
    while (!pending.isEmpty()) {
      final PbNode node = DagPb.decode(pending.pop());
      for (final PbLink link : node.links()) {
        if (link.nameOrEmpty().length() != padLength) {
          continue;
        }
        final Optional<byte[]> child = blockstore.get(link.hash());
        if (!out.add(link.hash(), child.map(b -> b.length))) {
          return false;
        }
        child.ifPresent(pending::push);
      }
    }
    return true;
  }

  /**
   * Depth first from {@code root} (already added), following every link, or, with
   * {@code span}, only a UnixFS file's children that overlap {@code [span[0], span[1])}.
   */
  private boolean walk(final Builder out, final Cid rootCid, final byte[] rootBlock,
      final long[] span) {
    record Frame(Cid cid, byte[] block, long start) {}
    final Deque<Frame> stack = new ArrayDeque<>();
    stack.push(new Frame(rootCid, rootBlock, 0));
    while (!stack.isEmpty()) {
      final Frame frame = stack.pop();
      final List<Cid> children = new ArrayList<>();
      final List<Long> starts = new ArrayList<>();
      if (span == null) {
        children.addAll(resolver.links(frame.cid(), frame.block()));
      } else if (frame.cid().codec() == Multicodec.DAG_PB.code()) {
        final PbNode node = DagPb.decode(frame.block());
        final UnixFsProto.Data data = unixfs(frame.block());
        if (data == null || data.getBlocksizesCount() != node.links().size()) {
          continue;
        }
        long childStart = frame.start() + data.getData().size();
        for (int i = 0; i < node.links().size(); i++) {
          final long size = data.getBlocksizes(i);
          if (childStart < span[1] && childStart + size > span[0]) {
            children.add(node.links().get(i).hash());
            starts.add(childStart);
          }
          childStart += size;
        }
      }
      // Visit in link order: collect this level first, then push in reverse.
      final List<Frame> next = new ArrayList<>();
      for (int i = 0; i < children.size(); i++) {
        final Cid child = children.get(i);
        if (Blocks.isIdentity(child) || !dupsOrNew(out, child)) {
          continue;
        }
        final boolean leaf = child.codec() == Multicodec.RAW.code();
        if (leaf) {
          if (!out.add(child, blockstore.size(child))) {
            return false;
          }
          continue;
        }
        final Optional<byte[]> block = blockstore.get(child);
        if (!out.add(child, block.map(b -> b.length))) {
          return false;
        }
        next.add(new Frame(child, block.get(), starts.isEmpty() ? 0 : starts.get(i)));
      }
      for (int i = next.size() - 1; i >= 0; i--) {
        stack.push(next.get(i));
      }
    }
    return true;
  }

  private static boolean dupsOrNew(final Builder out, final Cid cid) {
    return out.dups || !out.seen.contains(cid);
  }

  private static long fileSize(final UnixFsProto.Data data) {
    if (data.hasFilesize()) {
      return data.getFilesize();
    }
    long total = data.getData().size();
    for (int i = 0; i < data.getBlocksizesCount(); i++) {
      total += data.getBlocksizes(i);
    }
    return total;
  }

  /** The UnixFS data of a dag-pb block, or null when it has none or it does not parse. */
  private static UnixFsProto.Data unixfs(final byte[] block) {
    final PbNode node = DagPb.decode(block);
    if (node.data().isEmpty()) {
      return null;
    }
    try {
      return UnixFsProto.Data.parseFrom(node.data().get());
    } catch (final InvalidProtocolBufferException e) {
      return null;
    }
  }

  /** Collects the plan and enforces the limits. */
  private final class Builder {
    private final Cid requested;
    private final boolean dups;
    private final Set<Cid> seen = new HashSet<>();
    private final List<Cid> blocks = new ArrayList<>();
    private long[] sizes = new long[16];
    private long length;

    Builder(final Cid requested, final boolean dups) {
      this.requested = requested;
      this.dups = dups;
      this.length = CarWriter.headerLength(List.of(requested));
    }

    /** Adds a block of {@code size} bytes; false when it is missing (the plan ends). */
    boolean add(final Cid cid, final Optional<Integer> size) {
      if (Blocks.isIdentity(cid)) {
        return true;
      }
      if (size.isEmpty()) {
        return false;
      }
      if (!seen.add(cid) && !dups) {
        return true;
      }
      if (blocks.size() >= limits.maxBlocks()) {
        throw new TooLargeException("the CAR would hold more than " + limits.maxBlocks()
            + " blocks; ask for less with dag-scope or entity-bytes");
      }
      length += CarWriter.sectionLength(cid, size.get());
      if (length > limits.maxBytes()) {
        throw new TooLargeException("the CAR would be larger than " + limits.maxBytes()
            + " bytes; ask for less with dag-scope or entity-bytes");
      }
      if (blocks.size() == sizes.length) {
        sizes = java.util.Arrays.copyOf(sizes, sizes.length * 2);
      }
      sizes[blocks.size()] = size.get();
      blocks.add(cid);
      return true;
    }

    Plan build(final boolean complete) {
      return new Plan(List.of(requested), List.copyOf(blocks),
          java.util.Arrays.copyOf(sizes, blocks.size()), length, complete);
    }
  }
}
