package io.relaypinner.orbitdb.log;

import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.ipfs.blockstore.StoreUnavailableException;
import io.relaypinner.ipfs.datastore.Datastore;
import io.relaypinner.ipfs.datastore.StaleFenceException;
import io.relaypinner.libp2p.core.BadPeerException;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.orbitdb.BlockFetcher;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.orbitdb.RejectReason;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The verified replica of one OrbitDB database's oplog ({@code src/oplog/log.js}
 * {@code joinEntry}): joining a head walks {@code next} and {@code refs} back through the
 * {@link BlockFetcher} (blocks already in the blockstore are read, not fetched), verifies every
 * entry with the {@link EntryVerifier}, and stores an entry block (and the identity block that
 * signs it) in the blockstore only once it verified, access controller included. Rejected entries
 * are counted by reason, never stored, and their links not followed.
 *
 * <p><b>Completeness is kept incrementally.</b> An entry is <em>complete</em> when each of its
 * parents ({@code next} and {@code refs}) is complete or was refused. The log keeps, for every
 * block that is not complete yet, the entries waiting on it (a reverse map) and, for every
 * incomplete entry, how many parents it still waits for. Verifying an entry costs O(its links);
 * when it completes, the entries waiting on it are decremented and complete in turn (each link is
 * resolved once, no walk is ever repeated). The log {@link #isComplete() is complete} when no
 * entry waits and no block named by a verified entry or a peer's head is missing. Each join
 * reports the entries it completed ({@link JoinResult#completed()}).
 *
 * <p><b>The frontier</b> ({@link #missing()}) is the set of blocks named but not verified: a
 * block whose fetch failed is retried by later joins with exponential back-off (from
 * {@link #RETRY_MIN} to {@link #RETRY_MAX} on the injected {@link Clock}), so a parent that never
 * arrives costs one fetch per back-off period, never a fetch per join. How many blocks may be
 * missing and entries incomplete is the node's {@link LogMemory}: at most half of its budget in
 * one log, and the whole budget in all logs together. An entry whose parents would exceed the
 * missing blocks' budget is not accepted now (counted {@code bound.missing}, or
 * {@code bound.missing-all} when all logs' budget is spent) and stays on the frontier.
 *
 * <p><b>A history too long to track entry by entry.</b> A first sync walks a history back from
 * its head, and every entry stays incomplete until the first one arrives. When an entry would
 * exceed the incomplete entries' budget (counted {@code bound.incomplete} or
 * {@code bound.incomplete-all}), the log stops tracking entries one by one and
 * {@link #isWalkingHistory() walks the history}: it forgets its incomplete entries (giving their
 * budget back; counted {@code history-walks}) and keeps only its frontier, as every entry it
 * verifies still puts its absent parents there. While it walks, no entry is complete. Once the
 * frontier is empty, every block named by a verified entry is verified or refused, so the whole
 * log is complete: the join that empties it says so ({@link JoinResult#historyCompleted()}) and
 * the log tracks entries one by one again. So a log of any length completes in bounded memory,
 * and never stalls for lack of budget.
 *
 * <p><b>Memory.</b> What the log holds in memory is its heads, the frontier and the incomplete
 * entries (with the reverse map); whether an entry was verified is looked up in the node's
 * {@link LogMemory} LRU, else read from its marker in the datastore. So a log's memory does not
 * grow with its length, and all logs' together do not grow with their number.
 *
 * <p><b>Durability.</b> Entry and identity blocks are staged in the blockstore ({@link
 * Blockstore#stage}: visible at once, not yet fsynced) as each entry verifies; when the join
 * ends, one barrier ({@link Blockstore#sync}: the group commit of every block staged so far)
 * makes them durable, then one datastore write (one commit, one fsync) records a marker per new
 * entry, the count, the heads, the frontier and the incomplete entries (or, while the log walks a
 * history, that it does and which blocks of its frontier no entry names). Heads are thus written
 * only after every entry they name is durable, and a crash (kill -9 or power loss) in between
 * leaves blocks stored but not marked (the next join reads them locally, no network, and marks
 * them) or, before the barrier, not stored (fetched again). The datastore layout, and what other
 * modules may read of it, is {@link LogStore}'s.
 *
 * <p>Limits per join ({@link LogConfig}): concurrent fetches, entries, depth, fetch timeout.
 * Concurrent joins never fetch the same block twice (a block being processed by one join is
 * skipped by the others). Thread-safe.
 *
 * <p><b>Parts.</b> This class is the facade: it opens the log and answers for it, under one
 * lock that guards the {@link LogGraph} (entries, heads, completeness) and its {@link Frontier}
 * (missing blocks, retries, the history walk); each {@link Join} fetches, verifies and links one
 * walk; {@link LogStore} reads and writes the records.
 */
public final class OrbitDbLog {
  private static final Logger LOG = LoggerFactory.getLogger(OrbitDbLog.class);

  /** First retry delay of a block whose fetch failed. */
  public static final Duration RETRY_MIN = Frontier.RETRY_MIN;
  /** Longest retry delay of a block whose fetch keeps failing. */
  public static final Duration RETRY_MAX = Frontier.RETRY_MAX;
  /** Markers read at once by {@link #forEachEntry}. */
  static final int SCAN_PAGE = LogStore.SCAN_PAGE;

  private final OrbitDbAddress address;
  private final EntryVerifier verifier;
  final Blockstore blockstore;
  final BlockFetcher fetcher;
  final LogConfig config;
  final Executor executor;
  final Clock clock;
  private final LogStore store;
  /** Guards {@link #graph}, {@link #processing} and {@link #unsaved}. */
  final Object lock = new Object();
  /**
   * This log's part of the node's {@link LogMemory}: the recently verified and rejected entries,
   * and the budget of incomplete entries and missing blocks. Every verified entry has a marker in
   * the datastore, read when the cache misses, so memory does not grow with the log.
   */
  final LogMemory.Share memory;
  final Counters counters = new Counters();
  final LogGraph graph;
  /** Blocks some join processes now (others skip them). */
  final Set<Cid> processing = new HashSet<>();
  /** A join's write failed (datastore unavailable): the next join writes the state. */
  private boolean unsaved;

  /**
   * Opens the replica on the system clock, loading its persisted state.
   *
   * @param executor runs decoding and verification (never a Netty event loop)
   */
  public OrbitDbLog(final OrbitDbAddress address, final EntryVerifier verifier,
      final Blockstore blockstore, final BlockFetcher fetcher, final Datastore datastore,
      final LogConfig config, final Executor executor) {
    this(address, verifier, blockstore, fetcher, datastore, config, executor,
        Clock.systemUTC());
  }

  /**
   * Opens the replica with a {@link LogMemory} budget of its own, loading its persisted state.
   *
   * @param executor runs decoding and verification (never a Netty event loop)
   * @param clock times the retries of missing blocks
   */
  public OrbitDbLog(final OrbitDbAddress address, final EntryVerifier verifier,
      final Blockstore blockstore, final BlockFetcher fetcher, final Datastore datastore,
      final LogConfig config, final Executor executor, final Clock clock) {
    this(address, verifier, blockstore, fetcher, datastore, config, new LogMemory(), executor,
        clock);
  }

  /**
   * Opens the replica, loading its persisted state.
   *
   * @param memory the budget shared by every log of the node
   * @param executor runs decoding and verification (never a Netty event loop)
   * @param clock times the retries of missing blocks
   */
  public OrbitDbLog(final OrbitDbAddress address, final EntryVerifier verifier,
      final Blockstore blockstore, final BlockFetcher fetcher, final Datastore datastore,
      final LogConfig config, final LogMemory memory, final Executor executor,
      final Clock clock) {
    this(address, verifier, blockstore, fetcher, datastore, config, memory, executor, clock,
        LogFences.NONE);
  }

  /**
   * Opens the replica, loading its persisted state.
   *
   * @param memory the budget shared by every log of the node
   * @param executor runs decoding and verification (never a Netty event loop)
   * @param clock times the retries of missing blocks
   * @param fences who writes the shared heads when the state is scoped
   *     ({@link LogConfig#stateScope()})
   */
  public OrbitDbLog(final OrbitDbAddress address, final EntryVerifier verifier,
      final Blockstore blockstore, final BlockFetcher fetcher, final Datastore datastore,
      final LogConfig config, final LogMemory memory, final Executor executor,
      final Clock clock, final LogFences fences) {
    this.address = Objects.requireNonNull(address, "address");
    this.verifier = Objects.requireNonNull(verifier, "verifier");
    if (!verifier.address().equals(address)) {
      throw new IllegalArgumentException("verifier is for " + verifier.address());
    }
    this.blockstore = Objects.requireNonNull(blockstore, "blockstore");
    this.fetcher = Objects.requireNonNull(fetcher, "fetcher");
    Objects.requireNonNull(datastore, "datastore");
    this.config = Objects.requireNonNull(config, "config");
    this.executor = Objects.requireNonNull(executor, "executor");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.store = new LogStore(datastore, address, config.stateScope(), fences);
    // The share is given back when this log (not one of its parts) is garbage-collected.
    this.memory = Objects.requireNonNull(memory, "memory").share(this);
    this.graph = new LogGraph(address, this.memory, counters, store::isMarked);
    load();
    synchronized (lock) {
      graph.report();
    }
  }

  public OrbitDbAddress address() {
    return address;
  }

  /**
   * Whether a log of {@code address} with at least one verified entry is stored in
   * {@code datastore}, without opening it ({@link LogStore#hasStoredEntries}).
   */
  public static boolean hasStoredEntries(final Datastore datastore,
      final OrbitDbAddress address) {
    return LogStore.hasStoredEntries(datastore, address);
  }

  public EntryVerifier verifier() {
    return verifier;
  }

  /** The current heads. */
  public Set<Cid> heads() {
    synchronized (lock) {
      return Set.copyOf(graph.heads());
    }
  }

  /**
   * The heads last written to the datastore (by this node, or by another node sharing the
   * datastore, whose state is scoped: {@link LogConfig#stateScope()}): joining them catches up
   * with what the other node replicated.
   */
  public List<Cid> storedHeads() {
    return store.sharedHeads();
  }

  /** The block bytes of the current heads, oldest clock first (what a heads exchange sends). */
  public List<byte[]> headBlocks() {
    final List<Entry> entries = new ArrayList<>();
    for (final Cid head : heads()) {
      blockstore.get(head).ifPresent(bytes -> entries.add(Entry.decode(head, bytes)));
    }
    entries.sort(Entry.CLOCK_ORDER);
    final List<byte[]> out = new ArrayList<>(entries.size());
    for (final Entry entry : entries) {
      out.add(entry.block());
    }
    return out;
  }

  /** Whether the entry was verified into this log. */
  public boolean contains(final Cid cid) {
    synchronized (lock) {
      return graph.isVerified(cid);
    }
  }

  /**
   * Whether the entry was verified and its whole history is verified too (or refused); false for
   * every entry while the log {@link #isWalkingHistory() walks a history}.
   */
  public boolean isComplete(final Cid cid) {
    synchronized (lock) {
      return graph.isComplete(cid);
    }
  }

  /**
   * Whether the log is complete as far as the heads it knows: no verified entry waits for a
   * parent, and no block named by an entry or a peer's head is missing.
   */
  public boolean isComplete() {
    synchronized (lock) {
      return isCompleteHeld();
    }
  }

  /** {@link #isComplete()}; caller holds {@link #lock}. */
  boolean isCompleteHeld() {
    return graph.isComplete() && !unsaved;
  }

  /**
   * Whether the log walks a history too long to track entry by entry (its incomplete entries
   * would exceed their budget): it keeps only its frontier, and is complete once the frontier is
   * empty.
   */
  public boolean isWalkingHistory() {
    synchronized (lock) {
      return graph.isWalking();
    }
  }

  /** The number of verified entries. */
  public int size() {
    synchronized (lock) {
      return (int) Math.min(Integer.MAX_VALUE, graph.size());
    }
  }

  /**
   * Entries this log holds in memory now (not yet written, incomplete, heads, missing): bounded
   * by the join limits and its {@link LogMemory} share, not by the log's length.
   */
  public int entriesInMemory() {
    synchronized (lock) {
      return graph.entriesInMemory();
    }
  }

  /**
   * Gives this log's incomplete entries and missing blocks back to the node's {@link LogMemory}
   * (the log is no longer followed); also done when the log is garbage-collected.
   */
  public void release() {
    memory.release();
  }

  /** The number of verified entries that wait for a parent. */
  public int incompleteCount() {
    synchronized (lock) {
      return graph.incompleteCount();
    }
  }

  /**
   * Every verified entry, decoded from the blockstore, in log order (Lamport time, then clock
   * id): for reading payloads and for keyvalue state (an {@code orbitdb} access controller's
   * database). Holds the whole log in memory: a pass over a log of any length is
   * {@link #forEachEntry}.
   */
  public List<Entry> entries() {
    final List<Entry> out = new ArrayList<>();
    forEachEntry(out::add);
    out.sort(Entry.CLOCK_ORDER);
    return out;
  }

  /**
   * Hands every verified entry, decoded from the blockstore, to {@code action}, in no particular
   * order: the markers are read {@link #SCAN_PAGE} at a time and each block on its own, so the
   * memory a pass takes does not grow with the log. Entries verified during the pass may or may
   * not be seen.
   */
  public void forEachEntry(final Consumer<Entry> action) {
    final List<Cid> recent;
    synchronized (lock) {
      recent = graph.unpersisted();
    }
    for (final Cid cid : recent) {
      blockstore.get(cid).ifPresent(bytes -> action.accept(Entry.decode(cid, bytes)));
    }
    final Set<Cid> seen = new HashSet<>(recent);
    String after = null;
    do {
      after = store.markers(after, cid -> {
        if (!seen.contains(cid)) {
          blockstore.get(cid).ifPresent(bytes -> action.accept(Entry.decode(cid, bytes)));
        }
      });
    } while (after != null);
  }

  /** The frontier: blocks named by verified entries or peers' heads, not verified yet. */
  public Set<Cid> missing() {
    synchronized (lock) {
      return Set.copyOf(graph.frontier().blocks());
    }
  }

  /** The frontier ({@link #missing()}); the old name. */
  public Set<Cid> pending() {
    return missing();
  }

  /**
   * Makes every missing block due for a fetch at the next join (an operator asked for a sync:
   * the back-off is for unattended retries).
   */
  public void retryMissingNow() {
    synchronized (lock) {
      graph.frontier().retryAllNow();
    }
  }

  /**
   * Counters: {@code accepted}, {@code rejected.<reason>}, {@code unavailable} (a fetch of an
   * entry or its identity failed; retried with back-off), {@code deferred} (a missing block
   * skipped because its back-off has not passed), {@code truncated}, {@code duplicate},
   * {@code completed}, {@code bound.missing}, {@code bound.incomplete} (this log's half of the
   * {@link LogMemory} budget), {@code bound.missing-all}, {@code bound.incomplete-all} (all
   * logs' budget), {@code history-walks} (the log began to walk a history),
   * {@code histories-completed}, {@code identity-not-stored}.
   */
  public Map<String, Long> counters() {
    return counters.snapshot();
  }

  /**
   * Forgets which entries were rejected, so that they are fetched and verified again: call it
   * when the access controller changed (a grant may admit an entry refused before).
   */
  public void forgetRejections() {
    memory.forgetRejections();
  }

  /** Joins the entry with this CID (a head a peer named) and everything it links to. */
  public CompletableFuture<JoinResult> join(final Cid head) {
    final Join join = new Join(this);
    join.enqueue(head, 0);
    return join.start(false);
  }

  /**
   * Joins an entry given as block bytes (a heads-exchange frame or a pubsub message) and
   * everything it links to: the same verification, the head itself needs no fetch. A block
   * larger than {@link Entry#MAX_BLOCK_SIZE} is refused before it is decoded.
   */
  public CompletableFuture<JoinResult> joinBlock(final byte[] block) {
    return joinBlocks(List.of(block));
  }

  /**
   * Joins several entries given as block bytes in one join, as {@link #joinBlock} joins one:
   * heads that arrived together (a writer's burst the relay fell behind on) cost one barrier and
   * one datastore write for all of them instead of one each.
   */
  public CompletableFuture<JoinResult> joinBlocks(final List<byte[]> blocks) {
    final Join join = new Join(this);
    for (final byte[] block : blocks) {
      if (block.length > Entry.MAX_BLOCK_SIZE) {
        join.reject(null, RejectReason.MALFORMED_ENTRY);
        counters.count("oversized");
        continue;
      }
      try {
        join.enqueueDecoded(Entry.decode(block), 0);
      } catch (final BadPeerException e) {
        LOG.debug("{}: malformed entry: {}", address, e.getMessage());
        join.reject(null, RejectReason.MALFORMED_ENTRY);
      }
    }
    return join.start(false);
  }

  /** Fetches the missing blocks whose back-off has passed, and what they link to. */
  public CompletableFuture<JoinResult> resume() {
    return new Join(this).start(true);
  }

  /**
   * Writes the state when a join ended: if it changed anything, or the last write failed, or the
   * walk began or ended. A store that is down keeps it in memory for the next join (the log is
   * not complete until then); caller holds {@link #lock}.
   */
  void save(final boolean changed) {
    if (changed || unsaved || graph.frontier().walkChanged()) {
      try {
        persist();
        unsaved = false;
      } catch (final StoreUnavailableException e) {
        unsaved = true;
        // A stale fence: this node lost the lease since the write began; the next join writes
        // its own state again, without the shared heads unless it owns the log again.
        counters.count(e instanceof StaleFenceException ? "stale-fence" : "store-unavailable");
        LOG.debug("{}: log state not written now: {}", address, e.getMessage());
      }
    }
  }

  /**
   * Makes the staged blocks durable (one barrier), then writes the join's entries (one marker
   * each), the count, the heads, the frontier and the incomplete entries in one datastore write
   * (one commit); caller holds {@link #lock}. So the heads written here never name an entry that
   * is not durably stored.
   */
  private void persist() {
    blockstore.sync();
    final LogStore.Write write = graph.changes();
    store.write(write);
    graph.written(write);
  }

  /**
   * Loads the stored log: its count, heads, frontier and incomplete entries (re-linked, so the
   * entries waiting on each missing block are known again). Nothing else is read: the verified
   * entries stay in the datastore. A store of the earlier layout (lists of every entry) is
   * converted once.
   */
  private void load() {
    final Optional<LogStore.Stored> stored = store.read();
    if (stored.isEmpty()) {
      loadListed();
      return;
    }
    final int lost;
    synchronized (lock) {
      lost = graph.restore(stored.get(), blockstore::get);
    }
    if (lost > 0) {
      LOG.warn("{}: {} verified entries are no longer in the blockstore", address, lost);
    }
  }

  /** The earlier layout: every entry listed; re-linked once and written in this layout. */
  private void loadListed() {
    final LogStore.Listed listed = store.readListed();
    if (listed.entries().isEmpty()) {
      return;
    }
    final int lost;
    synchronized (lock) {
      // The block was garbage-collected or lost: a later join fetches it again.
      lost = graph.relink(listed.entries(), store.pending(), blockstore::get);
      // Markers first, the listed records after: GC's paged read of members relies on it
      // (LogStore.forEachMember).
      persist();
      store.deleteListed(listed);
    }
    if (lost > 0) {
      LOG.warn("{}: {} verified entries are no longer in the blockstore", address, lost);
    }
    LOG.info("{}: log of {} entries converted to per-entry markers", address, graph.size());
  }
}
