package io.relaypinner.relay.coordination;

import io.relaypinner.ipfs.blockstore.Blocks;
import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.ipfs.pin.DagWalker;
import io.relaypinner.ipfs.pin.LinkResolver;
import io.relaypinner.ipfs.pin.PinStore;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multihash;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Garbage collection of a block store shared by several relays (issue 24), run by the GC leader
 * only ({@link Coordination#gcLeader()}). The single-node {@code PinStore.gc()} is not safe there:
 * another relay may have written blocks it has not pinned yet (an import, a media pin in
 * progress), and its pin lock is local. So a run here:
 *
 * <ol>
 *   <li>lists the blocks with the time their object was written and leaves out every block
 *       younger than the <b>grace period</b> (being written, or written and about to be pinned);
 *   <li>marks everything the shared pins reach;
 *   <li>remembers the old, unreached blocks as candidates, and deletes only the candidates it
 *       already found unreached in a run at least one grace period earlier and still finds
 *       unreached now.
 * </ol>
 *
 * <p>So a block pinned through any relay at any time before the second run's mark is kept, a
 * block being written is never swept, and a relay that loses the leadership between runs leaves
 * nothing half-decided (the next leader starts with no candidates). A pin of an old unpinned block
 * made between the second run's mark and its delete (milliseconds) can still lose that block; the
 * pin then reports it missing and the next sync fetches it again. Engine on an injected clock;
 * not thread-safe (one scheduler thread).
 */
public final class SharedStoreGc {
  private static final Logger LOG = LoggerFactory.getLogger(SharedStoreGc.class);

  /** Blocks with the time they were written (an S3 listing). */
  public interface AgedKeys {
    void forEach(BiConsumer<Cid, Instant> visitor);
  }

  /** What a run did. */
  public record Result(boolean leader, long listed, long young, long reached, long candidates,
      long removed) {
    static final Result NOT_LEADER = new Result(false, 0, 0, 0, 0, 0);
  }

  private final Blockstore blockstore;
  private final AgedKeys keys;
  private final PinStore pins;
  private final DagWalker walker;
  private final BooleanSupplier leader;
  private final Duration grace;
  private final Clock clock;
  private final Map<Multihash, Instant> candidates = new HashMap<>();

  public SharedStoreGc(final Blockstore blockstore, final AgedKeys keys, final PinStore pins,
      final LinkResolver resolver, final BooleanSupplier leader, final Duration grace,
      final Clock clock) {
    this.blockstore = Objects.requireNonNull(blockstore, "blockstore");
    this.keys = Objects.requireNonNull(keys, "keys");
    this.pins = Objects.requireNonNull(pins, "pins");
    this.walker = new DagWalker(blockstore, resolver, PinStore.DEFAULT_MAX_MARK_BLOCKS);
    this.leader = Objects.requireNonNull(leader, "leader");
    this.grace = Objects.requireNonNull(grace, "grace");
    this.clock = Objects.requireNonNull(clock, "clock");
    if (grace.isNegative() || grace.isZero()) {
      throw new IllegalArgumentException("grace period must be positive");
    }
  }

  /** One run; does nothing (and forgets its candidates) unless this relay is the leader. */
  public Result run() {
    if (!leader.getAsBoolean()) {
      candidates.clear();
      return Result.NOT_LEADER;
    }
    final Instant now = clock.instant();
    final Instant cutoff = now.minus(grace);
    final Set<Multihash> old = new HashSet<>();
    final long[] counts = new long[2];
    keys.forEach((cid, written) -> {
      counts[0]++;
      if (written.isBefore(cutoff)) {
        old.add(cid.multihash());
      } else {
        counts[1]++;
      }
    });
    final DagWalker.Result mark = walker.walk(pins.list());
    if (!mark.complete()) {
      LOG.warn("shared GC: {} block(s) of pinned DAGs are missing, e.g. {}",
          mark.missing().size(), mark.missing().get(0));
    }
    old.removeAll(mark.reached());
    candidates.keySet().retainAll(old);
    long removed = 0;
    for (final Multihash multihash : old) {
      final Instant first = candidates.putIfAbsent(multihash, now);
      if (first == null || first.isAfter(cutoff)) {
        continue;
      }
      if (!leader.getAsBoolean()) {
        // Lost the leadership mid-run: another relay decides from now on.
        candidates.clear();
        break;
      }
      if (blockstore.delete(Blocks.rawCid(multihash))) {
        removed++;
      }
      candidates.remove(multihash);
    }
    final Result result = new Result(true, counts[0], counts[1], mark.reached().size(),
        candidates.size(), removed);
    LOG.info("shared GC: {} blocks, {} younger than {}, {} pinned, {} candidates, {} removed",
        result.listed(), result.young(), grace, result.reached(), result.candidates(), removed);
    return result;
  }
}
