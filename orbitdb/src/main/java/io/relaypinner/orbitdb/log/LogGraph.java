package io.relaypinner.orbitdb.log;

import io.relaypinner.multiformats.Cid;
import io.relaypinner.orbitdb.OrbitDbAddress;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a log knows of its entries: how many it verified, its heads, and which verified entries
 * are incomplete, kept incrementally (see {@link OrbitDbLog}, "Completeness is kept
 * incrementally"): for every block not complete yet, the entries waiting on it (a reverse map),
 * and for every incomplete entry, how many parents it still waits for. Linking an entry costs
 * O(its links); when one completes, those waiting on it complete in turn. Its absent parents go
 * on the {@link Frontier}, which this graph owns; when the incomplete entries would exceed their
 * budget, the graph forgets them and the frontier walks the history alone.
 *
 * <p>Whether an entry was verified is looked up in memory (not yet written, incomplete, the
 * node's {@link LogMemory} LRU), else in its marker in the datastore ({@code marked}). The graph
 * also keeps what changed since the state was last written: the entries to mark, and the
 * entries that became or stopped being incomplete.
 *
 * <p>Not thread-safe: the log's lock guards it.
 */
final class LogGraph {
  // The log's own category: operators configure the log's logging by that name.
  private static final Logger LOG = LoggerFactory.getLogger(OrbitDbLog.class);

  private final OrbitDbAddress address;
  private final LogMemory.Share memory;
  private final Counters counters;
  /** Whether the datastore holds a verified entry's marker. */
  private final Predicate<Cid> marked;
  private final Frontier frontier;
  /** The number of verified entries. */
  private long size;
  private final Set<Cid> heads = new LinkedHashSet<>();
  /** Verified, their markers not written yet. */
  private Set<Cid> unpersisted = new HashSet<>();
  /** Block not complete yet (missing, or verified but incomplete) to the entries waiting on it. */
  private Map<Cid, List<Cid>> waiting = new HashMap<>();
  /** Incomplete verified entry to the number of its parents not complete yet. */
  private Map<Cid, Integer> unresolved = new HashMap<>();
  /**
   * Entries that became incomplete since the state was last written (their record is to be
   * written), and entries no longer incomplete whose record is still written: a write carries
   * what changed, never the whole set.
   */
  private Set<Cid> incompleteAdded = new HashSet<>();
  private Set<Cid> incompleteGone = new HashSet<>();

  LogGraph(final OrbitDbAddress address, final LogMemory.Share memory, final Counters counters,
      final Predicate<Cid> marked) {
    this.address = address;
    this.memory = memory;
    this.counters = counters;
    this.marked = marked;
    this.frontier = new Frontier(memory, counters, this::incompleteCount);
  }

  Frontier frontier() {
    return frontier;
  }

  /** The number of verified entries. */
  long size() {
    return size;
  }

  /** The heads (a live view). */
  Set<Cid> heads() {
    return heads;
  }

  /** The number of verified entries that wait for a parent. */
  int incompleteCount() {
    return unresolved.size();
  }

  /** Entries held in memory: not yet written, incomplete, heads, missing. */
  int entriesInMemory() {
    return unpersisted.size() + unresolved.size() + heads.size() + frontier.size();
  }

  /** Whether the log walks a history ({@link Frontier#isWalking()}). */
  boolean isWalking() {
    return frontier.isWalking();
  }

  /**
   * Whether {@code cid} is a verified entry: in memory (recent, not yet persisted, incomplete)
   * or marked in the datastore.
   */
  boolean isVerified(final Cid cid) {
    if (unpersisted.contains(cid) || unresolved.containsKey(cid) || memory.isVerified(cid)) {
      return true;
    }
    if (marked.test(cid)) {
      memory.verified(cid);
      return true;
    }
    return false;
  }

  /** Whether the entry is verified and its whole history too; never while walking. */
  boolean isComplete(final Cid cid) {
    return !frontier.isWalking() && !unresolved.containsKey(cid) && isVerified(cid);
  }

  /** No entry waits and no block is missing (whether the state is written is the log's). */
  boolean isComplete() {
    return !frontier.isWalking() && unresolved.isEmpty() && frontier.isEmpty();
  }

  /**
   * Adds a verified entry to the log, the heads and the completeness bookkeeping. Returns the
   * counter naming why it was not added (a bound), or null.
   *
   * @param done receives the entries this one completes (itself included)
   * @param follow receives the parents to fetch
   * @param bounded whether the budget of missing blocks and incomplete entries applies
   * @param fresh a newly verified entry (counted, a head, its marker to write); false: an
   *     incomplete entry of the stored log, re-linked at load
   */
  String link(final Entry entry, final List<Cid> done, final List<Cid> follow,
      final boolean bounded, final boolean fresh) {
    final Cid cid = entry.cid();
    final Set<Cid> parents = new LinkedHashSet<>(entry.next());
    parents.addAll(entry.refs());
    final List<Cid> open = new ArrayList<>(parents.size());
    final List<Cid> absent = new ArrayList<>();
    int newMissing = 0;
    for (final Cid parent : parents) {
      if (parent.equals(cid) || memory.isRejected(parent)) {
        continue;
      }
      if (unresolved.containsKey(parent)) {
        open.add(parent);
        continue;
      }
      if (isVerified(parent)) {
        continue;
      }
      open.add(parent);
      absent.add(parent);
      if (!frontier.contains(parent)) {
        newMissing++;
      }
    }
    if (bounded && !open.isEmpty()) {
      report();
      final String missingBound = memory.missingBound(
          frontier.size() + newMissing - (frontier.contains(cid) ? 1 : 0));
      if (missingBound != null) {
        return missingBound;
      }
      if (!frontier.isWalking()) {
        final String incompleteBound = memory.incompleteBound(unresolved.size() + 1);
        if (incompleteBound != null) {
          counters.count(incompleteBound);
          walkHistory();
        }
      }
    }
    final boolean named = frontier.verified(cid);
    if (fresh) {
      size++;
      memory.verified(cid);
      unpersisted.add(cid);
      for (final Cid parent : parents) {
        heads.remove(parent);
      }
      // A head unless a verified entry names it: one waits on it, or, while the history is
      // walked (nothing waits), it was put on the frontier by one.
      if (frontier.isWalking() ? !named : !waiting.containsKey(cid)) {
        heads.add(cid);
      }
    }
    for (final Cid parent : absent) {
      // Named by a verified entry now, whoever put it on the frontier.
      frontier.named(parent, bounded);
      follow.add(parent);
    }
    if (frontier.isWalking()) {
      report();
      return null;
    }
    for (final Cid parent : open) {
      waiting.computeIfAbsent(parent, k -> new ArrayList<>(2)).add(cid);
    }
    if (open.isEmpty()) {
      if (unresolved.remove(cid) != null) {
        leftIncomplete(cid);
      }
      done.add(cid);
      resolve(cid, done);
    } else if (unresolved.put(cid, open.size()) == null) {
      becameIncomplete(cid);
    }
    report();
    return null;
  }

  /**
   * {@code cid} was refused: it leaves the frontier and resolves the entries waiting on it
   * (nothing more can come); {@code done} receives those it completes.
   */
  void refused(final Cid cid, final List<Cid> done) {
    frontier.refused(cid);
    resolve(cid, done);
    report();
  }

  /**
   * The incomplete entries would exceed their budget: the log forgets them and walks the history
   * with its frontier alone, complete once the frontier is empty.
   */
  private void walkHistory() {
    frontier.beginWalk(waiting.keySet(), unresolved.keySet());
    final int forgotten = unresolved.size();
    for (final Cid cid : unresolved.keySet()) {
      leftIncomplete(cid);
    }
    unresolved = new HashMap<>();
    waiting = new HashMap<>();
    counters.count("history-walks");
    report();
    LOG.info("{}: {} entries wait for their history: walking it with its frontier alone, complete"
        + " once the frontier is empty", address, forgotten);
  }

  /**
   * {@code cid} is complete (or refused): the entries waiting on it count one parent less, and
   * those left with none complete in turn.
   */
  private void resolve(final Cid cid, final List<Cid> done) {
    final Deque<Cid> stack = new ArrayDeque<>();
    stack.push(cid);
    while (!stack.isEmpty()) {
      final List<Cid> children = waiting.remove(stack.pop());
      if (children == null) {
        continue;
      }
      for (final Cid child : children) {
        final Integer left = unresolved.get(child);
        if (left == null) {
          continue;
        }
        if (left <= 1) {
          unresolved.remove(child);
          leftIncomplete(child);
          done.add(child);
          stack.push(child);
        } else {
          unresolved.put(child, left - 1);
        }
      }
    }
  }

  /** {@code cid} became incomplete: its record is to be written. */
  private void becameIncomplete(final Cid cid) {
    if (!incompleteGone.remove(cid)) {
      incompleteAdded.add(cid);
    }
  }

  /** {@code cid} is no longer incomplete: its record, if written, goes. */
  private void leftIncomplete(final Cid cid) {
    if (!incompleteAdded.remove(cid)) {
      incompleteGone.add(cid);
    }
  }

  /**
   * Restores the stored state of the log: its count, heads, frontier, and incomplete entries
   * re-linked (so the entries waiting on each missing block are known again; those of the
   * earlier layout are to be written as records). Returns how many incomplete entries are no
   * longer in the blockstore.
   */
  int restore(final LogStore.Stored stored, final Function<Cid, Optional<byte[]>> blocks) {
    size = stored.size();
    heads.addAll(stored.heads());
    if (stored.walk() != null) {
      frontier.restoreWalk(stored.walk());
    }
    frontier.restore(stored.pending(), cid -> true);
    // Placeholders first: an incomplete parent re-linked later still counts as open.
    for (final Cid cid : stored.incomplete()) {
      unresolved.put(cid, Integer.MAX_VALUE);
    }
    int lost = 0;
    for (final Cid cid : stored.incomplete()) {
      final Optional<byte[]> bytes = blocks.apply(cid);
      if (bytes.isEmpty()) {
        if (unresolved.remove(cid) != null) {
          leftIncomplete(cid);
        }
        lost++;
        continue;
      }
      link(Entry.decode(cid, bytes.get()), new ArrayList<>(), new ArrayList<>(), false, false);
    }
    for (final Cid cid : stored.legacyIncomplete()) {
      if (unresolved.containsKey(cid)) {
        becameIncomplete(cid);
      }
    }
    return lost;
  }

  /**
   * Rebuilds the log from the layout before the markers, which listed every entry: each is
   * linked again as newly verified (its marker to write), then the stored frontier is restored.
   * Returns how many listed entries are no longer in the blockstore (a later join fetches them).
   */
  int relink(final List<Cid> listed, final List<Cid> pending,
      final Function<Cid, Optional<byte[]>> blocks) {
    int lost = 0;
    for (final Cid cid : listed) {
      if (isVerified(cid)) {
        continue;
      }
      final Optional<byte[]> bytes = blocks.apply(cid);
      if (bytes.isEmpty()) {
        lost++;
        continue;
      }
      link(Entry.decode(cid, bytes.get()), new ArrayList<>(), new ArrayList<>(), false, true);
    }
    frontier.restore(pending, cid -> !isVerified(cid));
    return lost;
  }

  /** What the next write records: what changed since the last one, and the whole small state. */
  LogStore.Write changes() {
    return new LogStore.Write(List.copyOf(unpersisted), size, heads, frontier.blocks(),
        frontier.walkRecord(), frontier.walkChanged(), incompleteAdded, incompleteGone);
  }

  /** {@code written} was written: its markers and incomplete records are stored. */
  void written(final LogStore.Write written) {
    incompleteAdded = new HashSet<>();
    incompleteGone = new HashSet<>();
    frontier.written();
    written.marked().forEach(unpersisted::remove);
  }

  /** The verified entries whose markers are not written yet (a copy). */
  List<Cid> unpersisted() {
    return new ArrayList<>(unpersisted);
  }

  /** Tells the node's {@link LogMemory} this log's sizes. */
  void report() {
    frontier.report();
  }

  /**
   * Replaces the empty maps and sets by new ones: a hash table never shrinks, and one long join
   * (a first sync walks the whole history back from its head, every entry incomplete until the
   * first one arrives) would leave each with room for the whole history.
   */
  void compact() {
    if (unresolved.isEmpty()) {
      unresolved = new HashMap<>();
    }
    if (waiting.isEmpty()) {
      waiting = new HashMap<>();
    }
    if (unpersisted.isEmpty()) {
      unpersisted = new HashSet<>();
    }
    frontier.compact();
  }
}
