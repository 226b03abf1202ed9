package io.relaypinner.ipfs.pin;

import io.relaypinner.ipfs.blockstore.Blocks;
import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multihash;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * Walks the DAGs under a set of roots through a {@link Blockstore}, depth first and iteratively
 * (an explicit stack, so depth cannot overflow the thread's stack), reading links with a {@link
 * LinkResolver}.
 *
 * <ul>
 *   <li>Each (codec, multihash) is visited once: shared subtrees and any cycle a resolver could
 *       produce are walked once. The codec is part of the key because the same bytes read under
 *       another codec can have other links, and GC must mark those too.
 *   <li>Absent blocks are reported in {@link Result#missing} and the walk goes on with the
 *       other branches.
 *   <li>Identity CIDs are read from the CID itself and never reported missing.
 *   <li>At most {@code maxBlocks} distinct blocks (present or missing) are visited; one more
 *       throws {@link DagLimitExceededException}, since a cut-off walk proves nothing.
 * </ul>
 *
 * <p>Thread-safe: each {@link #walk} has its own state. It does not lock the blockstore; callers
 * that need a stable view ({@link PinStore}) lock around it.
 */
public final class DagWalker {
  private final Blockstore blockstore;
  private final LinkResolver resolver;
  private final long maxBlocks;

  /** What one walk saw. */
  public record Result(Set<Multihash> reached, List<Cid> missing, long bytes) {
    /** Copies; {@code reached} holds the multihashes of the present, non-identity blocks. */
    public Result {
      reached = Collections.unmodifiableSet(reached);
      missing = List.copyOf(missing);
    }

    /** Whether every block of the DAGs was present. */
    public boolean complete() {
      return missing.isEmpty();
    }
  }

  /**
   * A walker over {@code blockstore} that visits at most {@code maxBlocks} blocks per walk.
   *
   * @throws IllegalArgumentException when {@code maxBlocks} is not positive
   */
  public DagWalker(final Blockstore blockstore, final LinkResolver resolver,
      final long maxBlocks) {
    if (maxBlocks <= 0) {
      throw new IllegalArgumentException("maxBlocks must be > 0: " + maxBlocks);
    }
    this.blockstore = Objects.requireNonNull(blockstore, "blockstore");
    this.resolver = Objects.requireNonNull(resolver, "resolver");
    this.maxBlocks = maxBlocks;
  }

  /**
   * Walks every DAG under {@code roots}.
   *
   * @throws DagLimitExceededException when more than {@code maxBlocks} blocks are reachable
   * @throws LinkResolutionException when a present block's links cannot be read
   */
  public Result walk(final Collection<Cid> roots) {
    final Set<Cid> visited = new HashSet<>();
    final Set<Multihash> reached = new HashSet<>();
    final List<Cid> missing = new ArrayList<>();
    final Deque<Cid> stack = new ArrayDeque<>();
    long bytes = 0;
    for (final Cid root : roots) {
      stack.push(root);
    }
    while (!stack.isEmpty()) {
      final Cid cid = stack.pop();
      // CIDv0 and CIDv1 dag-pb of one multihash are the same block with the same links.
      if (!visited.add(cid.toV1())) {
        continue;
      }
      if (visited.size() > maxBlocks) {
        throw new DagLimitExceededException(
            "DAG walk from " + roots.size() + " root(s) exceeds " + maxBlocks + " blocks");
      }
      final Optional<byte[]> block = blockstore.get(cid);
      if (block.isEmpty()) {
        missing.add(cid);
        continue;
      }
      if (!Blocks.isIdentity(cid)) {
        reached.add(cid.multihash());
        bytes += block.get().length;
      }
      final List<Cid> links = resolver.links(cid, block.get());
      // Pushed in reverse so the first link is walked first, in block order.
      for (int i = links.size() - 1; i >= 0; i--) {
        if (!visited.contains(links.get(i).toV1())) {
          stack.push(links.get(i));
        }
      }
    }
    return new Result(reached, missing, bytes);
  }
}
