package io.relaypinner.relay.gateway;

import com.google.protobuf.InvalidProtocolBufferException;
import io.relaypinner.common.budget.LimitListener;
import io.relaypinner.common.budget.Reservation;
import io.relaypinner.common.budget.Resource;
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
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * Decides which blocks a trustless-gateway CAR holds, in depth-first order, before the first
 * byte is sent: so the answer has an exact {@code Content-Length}, and a DAG over the limits is
 * refused with a clear error instead of a cut-off stream. No Netty, no threads: callers run it on
 * the storage executor.
 *
 * <p>Bounded memory whatever the DAG (an anonymous request chooses it): the walk's frontier
 * holds CIDs, every block is sized through the blockstore's size lookup and counted against the
 * limits before anything is read, and an inner block is read only when the walk visits it (for
 * its links), then dropped before the next: at most {@link #MAX_HELD_BLOCKS} block in heap, plus
 * the plan's CIDs (at most {@link Limits#maxBlocks()}); {@link #maxHeldBytes()} is the bound and
 * {@link #peakHeldBytes()} what plans held. Leaf ({@code raw}) blocks are never read. With
 * {@code dups=y} a block met again is sized and read again, never kept.
 *
 * <p>What a plan holds while it is made is reserved ({@link Resource#MEMORY}) from the node
 * budget's {@code gateway} scope before it is held: {@link #CID_HEAP_BYTES} per CID planned or
 * on the frontier, and the one block read (its size looked up first). When the scope (or the
 * system above it) has no room the plan stops at once with {@link MemoryRefusedException} (503
 * {@code car_busy}); what it held is given back when it ends, whatever the outcome.
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
  /** Which limit refused a CAR (the label of {@code relay_ipfs_gateway_limited_total}). */
  public enum Limit {
    BLOCKS("car_blocks"),
    BYTES("car_bytes");

    private final String label;

    Limit(final String label) {
      this.label = label;
    }

    public String label() {
      return label;
    }
  }

  /** A CAR the limits refuse (the client can ask for less: {@code dag-scope}, ranges). */
  public static final class TooLargeException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final Limit limit;

    public TooLargeException(final Limit limit, final String message) {
      super(message, null, false, false);
      this.limit = Objects.requireNonNull(limit, "limit");
    }

    /** The limit the CAR would have passed. */
    public Limit limit() {
      return limit;
    }
  }

  /**
   * The node budget had no memory for the plan (other CARs or the gateway's fallback hold it):
   * the request may be retried later. Counted by the budget
   * ({@code relay_resource_limit_hits_total{scope="gateway"|"system",resource="memory"}}).
   */
  public static final class MemoryRefusedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public MemoryRefusedException(final long held) {
      super("the gateway's memory budget is taken (this plan held " + held
          + " bytes); retry later", null, false, false);
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

  /**
   * Heap a plan may count for each CID it keeps (the plan's list; the frontier and the
   * {@code dups=n} set refer to the same CIDs): a conservative estimate of a {@link Cid}, its
   * multihash and the list slot.
   */
  public static final int CID_HEAP_BYTES = 160;

  /**
   * Blocks one plan holds in heap at once: one. A block is read when the walk reaches it (to
   * learn its links), then dropped; the frontier holds CIDs, and sizes come from the
   * blockstore's size lookup before anything is read.
   */
  public static final int MAX_HELD_BLOCKS = 1;

  private final Blockstore blockstore;
  private final LinkResolver resolver;
  private final Limits limits;
  private final io.relaypinner.common.budget.Scope memory;
  /** The largest {@link #heldBytes} of one plan since this planner was made. */
  private final AtomicLong peakHeldBytes = new AtomicLong();

  /** A planner whose plans reserve from no budget (tests, embedders). */
  public CarPlanner(final Blockstore blockstore, final LinkResolver resolver,
      final Limits limits) {
    this(blockstore, resolver, limits, io.relaypinner.common.budget.Scope.root("gateway",
        io.relaypinner.common.budget.Limits.NONE, LimitListener.NONE));
  }

  /**
   * @param memory where plans reserve what they hold (the node budget's {@code gateway} memory
   *     scope)
   */
  public CarPlanner(final Blockstore blockstore, final LinkResolver resolver,
      final Limits limits, final io.relaypinner.common.budget.Scope memory) {
    this.blockstore = Objects.requireNonNull(blockstore, "blockstore");
    this.resolver = Objects.requireNonNull(resolver, "resolver");
    this.limits = Objects.requireNonNull(limits, "limits");
    this.memory = Objects.requireNonNull(memory, "memory");
  }

  public Limits limits() {
    return limits;
  }

  /**
   * The bound on the heap one plan holds, whatever the DAG: {@link #MAX_HELD_BLOCKS} blocks of
   * at most {@link Blocks#MAX_BLOCK_SIZE} and {@link Limits#maxBlocks()} CIDs.
   */
  public long maxHeldBytes() {
    return (long) MAX_HELD_BLOCKS * Blocks.MAX_BLOCK_SIZE
        + limits.maxBlocks() * CID_HEAP_BYTES;
  }

  /**
   * The most heap one plan held at once since this planner was made (blocks read and not yet
   * dropped, plus {@link #CID_HEAP_BYTES} per CID kept): at most {@link #maxHeldBytes()}.
   */
  public long peakHeldBytes() {
    return peakHeldBytes.get();
  }

  /**
   * Reserves what a finished plan keeps while its CAR is streamed ({@link #CID_HEAP_BYTES} per
   * block) from this planner's memory scope; close it once the response is sent or discarded
   * ({@link io.relaypinner.relay.http.StreamedResponse.Body#releasing}).
   *
   * @throws MemoryRefusedException when the scope has no room
   */
  public Reservation hold(final Plan plan) {
    return hold(memory, plan);
  }

  /** {@link #hold(Plan)} from {@code memory} (the export's plans, made without a planner). */
  public static Reservation hold(final io.relaypinner.common.budget.Scope memory,
      final Plan plan) {
    final long bytes = (long) plan.blocks().size() * CID_HEAP_BYTES;
    final Reservation held = memory.reserve(Resource.MEMORY, bytes);
    if (held == null) {
      throw new MemoryRefusedException(bytes);
    }
    return held;
  }

  /**
   * Plans the CAR for {@code terminal} reached through {@code pathBlocks}, with
   * {@code requested} as the header's root.
   *
   * @throws RootMissingException when {@code terminal} is not held
   * @throws TooLargeException when the CAR would pass a limit
   * @throws MemoryRefusedException when the node budget has no memory for what the plan holds
   * @throws TrustlessRequest.BadRequest when {@code entity-bytes} lies outside the file
   */
  public Plan plan(final Cid requested, final List<Cid> pathBlocks, final Cid terminal,
      final Scope scope, final Optional<EntityBytes> range, final boolean dups)
      throws TrustlessRequest.BadRequest {
    final Builder out = new Builder(requested, dups);
    try {
      for (final Cid cid : pathBlocks) {
        if (!out.add(cid, blockstore.size(cid))) {
          return out.build(false);
        }
      }
      final Optional<Integer> rootSize = blockstore.size(terminal);
      if (rootSize.isEmpty()) {
        throw new RootMissingException(terminal);
      }
      out.add(terminal, rootSize);
      final boolean complete = switch (scope) {
        case BLOCK -> true;
        case ALL -> walk(out, terminal, null);
        case ENTITY -> entity(out, terminal, range);
      };
      return out.build(complete);
    } finally {
      peakHeldBytes.accumulateAndGet(out.peak, Math::max);
      out.reserved.close();
    }
  }

  /** {@code dag-scope=entity}: the children of the terminal block that belong to it. */
  private boolean entity(final Builder out, final Cid cid, final Optional<EntityBytes> range)
      throws TrustlessRequest.BadRequest {
    if (cid.codec() == Multicodec.RAW.code()) {
      if (range.isPresent()) {
        range.get().resolve(
            blockstore.size(cid).orElseThrow(() -> new RootMissingException(cid)));
      }
      return true;
    }
    if (cid.codec() != Multicodec.DAG_PB.code()) {
      return true;
    }
    final Optional<UnixFsProto.Data> read = out.read(cid, CarPlanner::unixfs);
    if (read == null) {
      throw new RootMissingException(cid);
    }
    if (read.isEmpty()) {
      return true;
    }
    final UnixFsProto.Data data = read.get();
    return switch (data.getType()) {
      case File, Raw -> {
        if (range.isEmpty()) {
          yield walk(out, cid, null);
        }
        final Optional<long[]> span = range.get().resolve(fileSize(data));
        yield span.isEmpty() || walk(out, cid, span.get());
      }
      case HAMTShard -> shards(out, cid, data);
      default -> true;
    };
  }

  /**
   * The inner shards of a HAMT directory (links whose name is only the hex index), depth first
   * over a frontier of CIDs: a shard is read when it is visited.
   */
  private boolean shards(final Builder out, final Cid root, final UnixFsProto.Data data) {
    final Deque<Cid> pending = new ArrayDeque<>();
    pending.push(root);
    out.queued(1);
    final int padLength = Long.toHexString(Math.max(1, data.getFanout()) - 1).length();
    while (!pending.isEmpty()) {
      final Cid shard = pending.pop();
      out.unqueued(1);
      final List<Cid> links = out.read(shard, block -> {
        final List<Cid> inner = new ArrayList<>();
        for (final PbLink link : DagPb.decode(block).links()) {
          if (link.nameOrEmpty().length() == padLength) {
            inner.add(link.hash());
          }
        }
        return inner;
      });
      if (links == null) {
        // Gone since it was sized: the plan ends here, as for a missing block.
        return false;
      }
      for (final Cid link : links) {
        final Optional<Integer> size = blockstore.size(link);
        if (!out.add(link, size)) {
          return false;
        }
        if (size.isPresent()) {
          pending.push(link);
          out.queued(1);
        }
      }
    }
    return true;
  }

  /**
   * Depth first from {@code root} (already added), following every link, or, with
   * {@code span}, only a UnixFS file's children that overlap {@code [span[0], span[1])}. The
   * frontier holds CIDs: a block is read when it is visited (for its links) and dropped before
   * the next; its children are sized (not read) when they are added to the plan, so a limit is
   * met before anything over it is read.
   */
  private boolean walk(final Builder out, final Cid rootCid, final long[] span) {
    final Deque<Frame> stack = new ArrayDeque<>();
    stack.push(new Frame(rootCid, 0));
    out.queued(1);
    while (!stack.isEmpty()) {
      final Frame frame = stack.pop();
      out.unqueued(1);
      final Children children = out.read(frame.cid(), block -> children(frame, block, span));
      if (children == null) {
        // Gone since it was sized: the plan ends here, as for a missing block.
        return false;
      }
      // Visit in link order: collect this level first, then push in reverse.
      final List<Frame> next = new ArrayList<>();
      for (int i = 0; i < children.cids().size(); i++) {
        final Cid child = children.cids().get(i);
        if (Blocks.isIdentity(child) || !dupsOrNew(out, child)) {
          continue;
        }
        if (!out.add(child, blockstore.size(child))) {
          return false;
        }
        if (child.codec() != Multicodec.RAW.code()) {
          next.add(new Frame(child, children.starts().isEmpty() ? 0 : children.starts().get(i)));
        }
      }
      for (int i = next.size() - 1; i >= 0; i--) {
        stack.push(next.get(i));
      }
      out.queued(next.size());
    }
    return true;
  }

  /** A block the walk will visit, and where its bytes start in the file (ranges only). */
  private record Frame(Cid cid, long start) {}

  /** The children of a visited block to add, and their start offsets (ranges only). */
  private record Children(List<Cid> cids, List<Long> starts) {}

  private Children children(final Frame frame, final byte[] block, final long[] span) {
    final List<Cid> cids = new ArrayList<>();
    final List<Long> starts = new ArrayList<>();
    if (span == null) {
      cids.addAll(resolver.links(frame.cid(), block));
    } else if (frame.cid().codec() == Multicodec.DAG_PB.code()) {
      final PbNode node = DagPb.decode(block);
      final UnixFsProto.Data data = unixfs(block).orElse(null);
      if (data == null || data.getBlocksizesCount() != node.links().size()) {
        return new Children(List.of(), List.of());
      }
      long childStart = frame.start() + data.getData().size();
      for (int i = 0; i < node.links().size(); i++) {
        final long size = data.getBlocksizes(i);
        if (childStart < span[1] && childStart + size > span[0]) {
          cids.add(node.links().get(i).hash());
          starts.add(childStart);
        }
        childStart += size;
      }
    }
    return new Children(cids, starts);
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

  /** The UnixFS data of a dag-pb block; empty when it has none or it does not parse. */
  private static Optional<UnixFsProto.Data> unixfs(final byte[] block) {
    final PbNode node = DagPb.decode(block);
    if (node.data().isEmpty()) {
      return Optional.empty();
    }
    try {
      return Optional.of(UnixFsProto.Data.parseFrom(node.data().get()));
    } catch (final InvalidProtocolBufferException e) {
      return Optional.empty();
    }
  }

  /**
   * Collects the plan, enforces the limits, and counts the heap the plan holds: the blocks read
   * and not yet dropped, and {@link #CID_HEAP_BYTES} per CID in the plan or the frontier.
   */
  private final class Builder {
    private final Cid requested;
    private final boolean dups;
    private final Set<Cid> seen = new HashSet<>();
    private final List<Cid> blocks = new ArrayList<>();
    private long[] sizes = new long[16];
    private long length;
    /** Blocks read by the walk and not yet dropped, in bytes. */
    private long heldBlockBytes;
    /** CIDs waiting on the frontier. */
    private long frontier;
    /** The most {@link #held()} seen. */
    private long peak;
    /** What {@link #held()} counts, reserved from the node budget before it is held. */
    private final Reservation reserved = memory.reserve(Resource.MEMORY, 0);

    Builder(final Cid requested, final boolean dups) {
      this.requested = requested;
      this.dups = dups;
      this.length = CarWriter.headerLength(List.of(requested));
    }

    /**
     * Adds a block of {@code size} bytes (sized, not read); false when it is missing (the plan
     * ends).
     */
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
        throw new TooLargeException(Limit.BLOCKS, "the CAR would hold more than "
            + limits.maxBlocks() + " blocks; ask for less with dag-scope or entity-bytes");
      }
      length += CarWriter.sectionLength(cid, size.get());
      if (length > limits.maxBytes()) {
        throw new TooLargeException(Limit.BYTES, "the CAR would be larger than "
            + limits.maxBytes() + " bytes; ask for less with dag-scope or entity-bytes");
      }
      reserve(CID_HEAP_BYTES);
      if (blocks.size() == sizes.length) {
        sizes = java.util.Arrays.copyOf(sizes, sizes.length * 2);
      }
      sizes[blocks.size()] = size.get();
      blocks.add(cid);
      note();
      return true;
    }

    /**
     * Reads {@code cid}, hands its bytes to {@code use} and drops them before returning (the
     * only block the plan holds); null when the block is not held.
     */
    <T> T read(final Cid cid, final Function<byte[], T> use) {
      // Sized before it is read, so the budget refuses it before it is in the heap.
      final Optional<Integer> size = blockstore.size(cid);
      if (size.isEmpty()) {
        return null;
      }
      reserve(size.get());
      long bytes = size.get();
      try {
        final Optional<byte[]> block = blockstore.get(cid);
        if (block.isEmpty()) {
          return null;
        }
        if (block.get().length > bytes) {
          // Replaced by a larger block since it was sized (a store does not do that): held
          // now, so counted as it is.
          reserve(block.get().length - bytes);
          bytes = block.get().length;
        }
        heldBlockBytes += bytes;
        note();
        try {
          return use.apply(block.get());
        } finally {
          heldBlockBytes -= bytes;
        }
      } finally {
        reserved.shrink(bytes);
      }
    }

    void queued(final int count) {
      reserve((long) count * CID_HEAP_BYTES);
      frontier += count;
      note();
    }

    void unqueued(final int count) {
      frontier -= count;
      reserved.shrink((long) count * CID_HEAP_BYTES);
    }

    /** Takes {@code bytes} more from the node budget before they are held, or ends the plan. */
    private void reserve(final long bytes) {
      if (!reserved.grow(bytes)) {
        throw new MemoryRefusedException(reserved.held());
      }
    }

    private long held() {
      // Frontier CIDs are in the plan too (each was added before it was queued), but counting
      // them again keeps the estimate on the safe side.
      return heldBlockBytes + (blocks.size() + frontier) * (long) CID_HEAP_BYTES;
    }

    private void note() {
      peak = Math.max(peak, held());
    }

    Plan build(final boolean complete) {
      return new Plan(List.of(requested), List.copyOf(blocks),
          java.util.Arrays.copyOf(sizes, blocks.size()), length, complete);
    }
  }
}
