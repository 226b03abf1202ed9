package io.relaypinner.orbitdb.log;

import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.ipfs.blockstore.StoreUnavailableException;
import io.relaypinner.ipfs.dagcbor.DagCbor;
import io.relaypinner.ipfs.dagcbor.DagCborException;
import io.relaypinner.ipfs.dagcbor.DagCborValue;
import io.relaypinner.ipfs.datastore.Datastore;
import io.relaypinner.libp2p.core.BadPeerException;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multibase;
import io.relaypinner.multiformats.MultiformatException;
import io.relaypinner.orbitdb.BlockFetcher;
import io.relaypinner.orbitdb.EntryRejectedException;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.orbitdb.RejectReason;
import io.relaypinner.orbitdb.identity.Identity;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Deque;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
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
 * them) or, before the barrier, not stored (fetched again). Persisted under {@code /orbitdb/logs/<manifest CID>/}: {@code e/<CID>},
 * {@code count}, {@code heads}, {@code pending}, {@code i/<CID>} (an incomplete entry; a
 * write adds and removes only those that changed), {@code walk}.
 *
 * <p>Limits per join ({@link LogConfig}): concurrent fetches, entries, depth, fetch timeout.
 * Concurrent joins never fetch the same block twice (a block being processed by one join is
 * skipped by the others). Thread-safe.
 */
public final class OrbitDbLog {
  private static final Logger LOG = LoggerFactory.getLogger(OrbitDbLog.class);

  /** First retry delay of a block whose fetch failed. */
  public static final Duration RETRY_MIN = Duration.ofSeconds(1);
  /** Longest retry delay of a block whose fetch keeps failing. */
  public static final Duration RETRY_MAX = Duration.ofMinutes(2);
  /** CIDs per datastore record (a record holds at most 1 MiB). */
  private static final int BATCH = 10_000;
  private static final byte[] MARKER = new byte[0];
  /** Markers read at once by {@link #forEachEntry}. */
  static final int SCAN_PAGE = 1_000;

  private final OrbitDbAddress address;
  private final EntryVerifier verifier;
  private final Blockstore blockstore;
  private final BlockFetcher fetcher;
  private final Datastore datastore;
  private final LogConfig config;
  private final Executor executor;
  private final Clock clock;
  private final String keyPrefix;
  /** The heads key every node sharing the datastore reads ({@link #storedHeads()}). */
  private final String sharedHeadsKey;
  /** The state is under a node's scope ({@link LogConfig#stateScope()}). */
  private final boolean scoped;
  private final Object lock = new Object();
  /** The number of verified entries. */
  private long size;
  /**
   * This log's part of the node's {@link LogMemory}: the recently verified and rejected entries,
   * and the budget of incomplete entries and missing blocks. Every verified entry has a marker in
   * the datastore, read when the cache misses, so memory does not grow with the log.
   */
  private final LogMemory.Share memory;
  /** Verified by a join that has not written their markers yet. */
  private Set<Cid> unpersisted = new HashSet<>();
  /** A join's write failed (datastore unavailable): the next join writes the state. */
  private boolean unsaved;
  /**
   * Entries that became incomplete since the state was last written (their {@code i/<CID>} key
   * is to be written), and entries no longer incomplete whose key is still written: a write
   * carries what changed, never the whole set.
   */
  private Set<Cid> incompleteAdded = new HashSet<>();
  private Set<Cid> incompleteGone = new HashSet<>();
  /** Records of the earlier layout ({@code incomplete/<n>}) still stored: removed once. */
  private int legacyRecords;
  private final Set<Cid> heads = new LinkedHashSet<>();
  /** Block not complete yet (missing, or verified but incomplete) to the entries waiting on it. */
  private Map<Cid, List<Cid>> waiting = new HashMap<>();
  /** Incomplete verified entry to the number of its parents not complete yet. */
  private Map<Cid, Integer> unresolved = new HashMap<>();
  /** The frontier: blocks named and not verified, with their retry schedule. */
  private Map<Cid, Retry> missing = new LinkedHashMap<>();
  /**
   * While the log walks a history: the blocks of the frontier that no verified entry names (a
   * peer's head whose fetch failed), each a head once verified. Otherwise empty: {@link #waiting}
   * tells.
   */
  private Set<Cid> unnamed = new HashSet<>();
  /**
   * The log walks a history too long to track entry by entry: no entry is incomplete in
   * {@link #unresolved}, and the log is complete once its frontier is empty.
   */
  private boolean walking;
  /** Whether {@link #walking} changed since it was last written. */
  private boolean walkingDirty;
  /** Blocks some join processes now (others skip them). */
  private final Set<Cid> processing = new HashSet<>();
  private final Map<String, LongAdder> counters = new ConcurrentHashMap<>();

  /** When a missing block may be fetched again. */
  private record Retry(int attempts, long notBeforeMillis) {
    static Retry now() {
      return new Retry(0, Long.MIN_VALUE);
    }

    Retry failed(final long nowMillis) {
      final long delay = Math.min(RETRY_MAX.toMillis(),
          RETRY_MIN.toMillis() << Math.min(attempts, 20));
      return new Retry(attempts + 1, nowMillis + delay);
    }
  }

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
    this.address = Objects.requireNonNull(address, "address");
    this.verifier = Objects.requireNonNull(verifier, "verifier");
    if (!verifier.address().equals(address)) {
      throw new IllegalArgumentException("verifier is for " + verifier.address());
    }
    this.blockstore = Objects.requireNonNull(blockstore, "blockstore");
    this.fetcher = Objects.requireNonNull(fetcher, "fetcher");
    this.datastore = Objects.requireNonNull(datastore, "datastore");
    this.config = Objects.requireNonNull(config, "config");
    this.executor = Objects.requireNonNull(executor, "executor");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.sharedHeadsKey = keyPrefix(address) + "heads";
    this.scoped = !config.stateScope().isEmpty();
    // Nodes sharing one datastore keep their own state of the log (what each verified, its
    // count, frontier and heads): a marker another node wrote says nothing of this node's heads.
    this.keyPrefix = keyPrefix(address)
        + (scoped ? "r/" + config.stateScope() + "/" : "");
    this.memory = Objects.requireNonNull(memory, "memory").share(this);
    load();
    synchronized (lock) {
      report();
    }
  }

  public OrbitDbAddress address() {
    return address;
  }

  /**
   * Whether a log of {@code address} with at least one verified entry is stored in
   * {@code datastore}, without opening it.
   */
  public static boolean hasStoredEntries(final Datastore datastore,
      final OrbitDbAddress address) {
    final Optional<byte[]> count = datastore.get(keyPrefix(address) + "count");
    if (count.isPresent()) {
      return !new String(count.get(), StandardCharsets.US_ASCII).equals("0");
    }
    // The earlier layout.
    return datastore.get(keyPrefix(address) + "heads").map(h -> !decodeCids(h).isEmpty())
        .orElse(false);
  }

  private static String keyPrefix(final OrbitDbAddress address) {
    return "/orbitdb/logs/" + address.manifest().toString(Multibase.Base.BASE58BTC) + "/";
  }

  public EntryVerifier verifier() {
    return verifier;
  }

  /** The current heads. */
  public Set<Cid> heads() {
    synchronized (lock) {
      return Set.copyOf(heads);
    }
  }

  /**
   * The heads last written to the datastore (by this node, or by another node sharing the
   * datastore, whose state is scoped: {@link LogConfig#stateScope()}): joining them catches up
   * with what the other node replicated.
   */
  public List<Cid> storedHeads() {
    return datastore.get(sharedHeadsKey).map(OrbitDbLog::decodeCids).orElse(List.of());
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
      return isVerified(cid);
    }
  }

  /**
   * Whether the entry was verified and its whole history is verified too (or refused); false for
   * every entry while the log {@link #isWalkingHistory() walks a history}.
   */
  public boolean isComplete(final Cid cid) {
    synchronized (lock) {
      return !walking && !unresolved.containsKey(cid) && isVerified(cid);
    }
  }

  /**
   * Whether the log is complete as far as the heads it knows: no verified entry waits for a
   * parent, and no block named by an entry or a peer's head is missing.
   */
  public boolean isComplete() {
    synchronized (lock) {
      return !walking && unresolved.isEmpty() && missing.isEmpty() && !unsaved;
    }
  }

  /**
   * Whether the log walks a history too long to track entry by entry (its incomplete entries
   * would exceed their budget): it keeps only its frontier, and is complete once the frontier is
   * empty.
   */
  public boolean isWalkingHistory() {
    synchronized (lock) {
      return walking;
    }
  }

  /** The number of verified entries. */
  public int size() {
    synchronized (lock) {
      return (int) Math.min(Integer.MAX_VALUE, size);
    }
  }

  /**
   * Entries this log holds in memory now (not yet written, incomplete, heads, missing): bounded
   * by the join limits and its {@link LogMemory} share, not by the log's length.
   */
  public int entriesInMemory() {
    synchronized (lock) {
      return unpersisted.size() + unresolved.size() + heads.size() + missing.size();
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
      return unresolved.size();
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
    final String markers = keyPrefix + "e/";
    final List<Cid> recent;
    synchronized (lock) {
      recent = new ArrayList<>(unpersisted);
    }
    for (final Cid cid : recent) {
      blockstore.get(cid).ifPresent(bytes -> action.accept(Entry.decode(cid, bytes)));
    }
    final Set<Cid> seen = new HashSet<>(recent);
    String after = null;
    while (true) {
      final List<Datastore.Entry> page = datastore.scan(markers, after, SCAN_PAGE);
      for (final Datastore.Entry e : page) {
        final Cid cid;
        try {
          cid = Cid.parse(e.key().substring(markers.length()));
        } catch (final MultiformatException ex) {
          continue;
        }
        if (!seen.contains(cid)) {
          blockstore.get(cid).ifPresent(bytes -> action.accept(Entry.decode(cid, bytes)));
        }
      }
      if (page.size() < SCAN_PAGE) {
        return;
      }
      after = page.get(page.size() - 1).key();
    }
  }

  /** The frontier: blocks named by verified entries or peers' heads, not verified yet. */
  public Set<Cid> missing() {
    synchronized (lock) {
      return Set.copyOf(missing.keySet());
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
      missing.replaceAll((cid, retry) -> new Retry(retry.attempts(), Long.MIN_VALUE));
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
    final Map<String, Long> out = new java.util.TreeMap<>();
    counters.forEach((k, v) -> out.put(k, v.sum()));
    return out;
  }

  private void count(final String name) {
    count(name, 1);
  }

  private void count(final String name, final long n) {
    counters.computeIfAbsent(name, k -> new LongAdder()).add(n);
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
    final Join join = new Join();
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
    final Join join = new Join();
    for (final byte[] block : blocks) {
      if (block.length > Entry.MAX_BLOCK_SIZE) {
        join.reject(null, RejectReason.MALFORMED_ENTRY);
        count("oversized");
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
    return new Join().start(true);
  }

  /** One walk from some heads; single-use. */
  private final class Join {
    private final Deque<Item> queue = new ArrayDeque<>();
    private final Set<Cid> seen = new HashSet<>();
    private final List<Entry> added = new ArrayList<>();
    private final List<Cid> completed = new ArrayList<>();
    private final Map<RejectReason, Integer> rejected = new EnumMap<>(RejectReason.class);
    private final List<Cid> unavailable = new ArrayList<>();
    private final CompletableFuture<JoinResult> result = new CompletableFuture<>();
    private int inFlight;
    private int processed;
    private boolean truncated;

    private record Item(Cid cid, Entry entry, int depth) {}

    synchronized void enqueue(final Cid cid, final int depth) {
      if (seen.add(cid)) {
        queue.add(new Item(cid, null, depth));
      }
    }

    synchronized void enqueueDecoded(final Entry entry, final int depth) {
      if (seen.add(entry.cid())) {
        queue.add(new Item(entry.cid(), entry, depth));
      }
    }

    synchronized void reject(final Cid cid, final RejectReason reason) {
      rejected.merge(reason, 1, Integer::sum);
      count("rejected." + reason.label());
      if (cid != null && reason != RejectReason.IDENTITY_UNAVAILABLE) {
        memory.rejected(cid);
        final List<Cid> done = new ArrayList<>();
        synchronized (lock) {
          missing.remove(cid);
          unnamed.remove(cid);
          // A refused block resolves the entries waiting on it: nothing more can come.
          resolve(cid, done);
          report();
        }
        completed.addAll(done);
      }
    }

    CompletableFuture<JoinResult> start(final boolean frontier) {
      if (frontier) {
        final long now = clock.millis();
        int deferred = 0;
        final List<Cid> due = new ArrayList<>();
        synchronized (lock) {
          for (final Map.Entry<Cid, Retry> e : missing.entrySet()) {
            if (e.getValue().notBeforeMillis() > now) {
              deferred++;
            } else {
              due.add(e.getKey());
            }
          }
        }
        for (final Cid cid : due) {
          enqueue(cid, 0);
        }
        if (deferred > 0) {
          count("deferred", deferred);
        }
      }
      pump();
      return result;
    }

    private void pump() {
      final List<Item> toStart = new ArrayList<>();
      boolean finished = false;
      synchronized (this) {
        while (inFlight < config.maxConcurrentFetches() && !queue.isEmpty()) {
          final Item item = queue.poll();
          if (memory.isRejected(item.cid())) {
            continue;
          }
          if (processed >= config.maxEntriesPerJoin() || item.depth() > config.maxDepth()) {
            truncated = true;
            queue.addFirst(item);
            break;
          }
          synchronized (lock) {
            final boolean verified;
            try {
              verified = isVerified(item.cid());
            } catch (final StoreUnavailableException e) {
              // The datastore is down: the block stays on the frontier, tried again later.
              storeDown(item.cid(), e);
              continue;
            }
            if (verified) {
              count("duplicate");
              continue;
            }
            if (!processing.add(item.cid())) {
              // Another join has it; it follows its links too.
              continue;
            }
          }
          processed++;
          inFlight++;
          toStart.add(item);
        }
        if (inFlight == 0 && toStart.isEmpty()) {
          finished = true;
        }
      }
      for (final Item item : toStart) {
        process(item).whenComplete((ignored, error) -> {
          if (error != null) {
            LOG.warn("{}: join step for {} failed", address, item.cid(), error);
          }
          synchronized (lock) {
            processing.remove(item.cid());
          }
          synchronized (this) {
            inFlight--;
          }
          pump();
        });
      }
      if (finished) {
        finish();
      }
    }

    private CompletableFuture<Void> process(final Item item) {
      final CompletableFuture<Entry> entry;
      if (item.entry() != null) {
        entry = CompletableFuture.completedFuture(item.entry());
      } else {
        entry = bytes(item.cid()).thenApplyAsync(bytes -> Entry.decode(item.cid(), bytes),
            executor);
      }
      final CompletableFuture<Object[]> verified = entry.thenCompose(e -> verifier.verify(e)
          .thenApply(identity -> new Object[] {e, identity}));
      return verified.handle((pair, error) -> {
        if (error == null) {
          try {
            accept((Entry) pair[0], (Identity) pair[1], item.depth());
            return null;
          } catch (final StoreUnavailableException e) {
            storeDown(item.cid(), e);
            return null;
          }
        }
        final Throwable cause = unwrap(error);
        if (cause instanceof StoreUnavailableException down) {
          storeDown(item.cid(), down);
          return null;
        }
        if (cause instanceof EntryRejectedException rejection
            && rejection.reason() != RejectReason.IDENTITY_UNAVAILABLE) {
          LOG.debug("{}: rejected {}: {}", address, item.cid(), rejection.getMessage());
          reject(item.cid(), rejection.reason());
        } else if (cause instanceof BadPeerException) {
          LOG.debug("{}: malformed {}: {}", address, item.cid(), cause.getMessage());
          reject(item.cid(), RejectReason.MALFORMED_ENTRY);
        } else {
          LOG.debug("{}: could not fetch {}: {}", address, item.cid(), cause.toString());
          synchronized (this) {
            unavailable.add(item.cid());
          }
          count("unavailable");
          final long now = clock.millis();
          synchronized (lock) {
            final Retry retry = missing.get(item.cid());
            if (retry != null) {
              missing.put(item.cid(), retry.failed(now));
            } else {
              addMissing(item.cid(), Retry.now().failed(now));
            }
          }
        }
        return null;
      });
    }

    /**
     * A store (block or data) could not be reached for {@code cid}: it stays on the frontier and
     * is tried again after {@link #RETRY_MIN}, without growing its back-off (the peer is not at
     * fault); the store logs its outage once.
     */
    private void storeDown(final Cid cid, final StoreUnavailableException e) {
      LOG.debug("{}: {} not stored now: {}", address, cid, e.getMessage());
      synchronized (this) {
        unavailable.add(cid);
      }
      count("store-unavailable");
      final long now = clock.millis();
      synchronized (lock) {
        final Retry retry = missing.get(cid);
        final Retry next = new Retry(retry == null ? 0 : retry.attempts(),
            now + RETRY_MIN.toMillis());
        if (retry != null) {
          missing.put(cid, next);
        } else {
          addMissing(cid, next);
        }
      }
    }

    private CompletableFuture<byte[]> bytes(final Cid cid) {
      final Optional<byte[]> held;
      try {
        held = blockstore.get(cid);
      } catch (final RuntimeException e) {
        return CompletableFuture.failedFuture(e);
      }
      if (held.isPresent()) {
        return CompletableFuture.completedFuture(held.get());
      }
      return fetcher.fetch(cid).orTimeout(config.fetchTimeout().toMillis(),
          TimeUnit.MILLISECONDS);
    }

    private void accept(final Entry entry, final Identity identity, final int depth) {
      final Cid cid = entry.cid();
      final List<Cid> done = new ArrayList<>();
      final List<Cid> follow = new ArrayList<>();
      final boolean duplicate;
      synchronized (lock) {
        duplicate = isVerified(cid);
      }
      if (duplicate) {
        count("duplicate");
        return;
      }
      // Staged before it is linked, and only now: the entry passed every check, the access
      // controller included. Staged blocks are readable at once and made durable by the join's
      // one barrier (persist) before any datastore write names them. A store that fails here
      // (StoreUnavailableException) leaves the entry unlinked, on the frontier: the log never
      // counts or heads an entry it lacks.
      if (!blockstore.has(cid)) {
        blockstore.stage(cid, entry.block());
      }
      storeIdentity(identity);
      final String refused;
      synchronized (lock) {
        if (isVerified(cid)) {
          refused = "duplicate";
        } else {
          refused = link(entry, done, follow, true, true);
        }
      }
      if (refused != null) {
        count(refused);
        if (!refused.equals("duplicate")) {
          // A bound was hit: the entry stays on the frontier and is tried again later.
          synchronized (this) {
            unavailable.add(cid);
          }
          final long now = clock.millis();
          synchronized (lock) {
            final Retry retry = missing.get(cid);
            if (retry != null) {
              missing.put(cid, retry.failed(now));
            } else {
              addMissing(cid, Retry.now().failed(now));
            }
          }
        }
        return;
      }
      count("accepted");
      if (!done.isEmpty()) {
        count("completed", done.size());
      }
      synchronized (this) {
        added.add(entry);
        completed.addAll(done);
        for (final Cid parent : follow) {
          enqueue(parent, depth + 1);
        }
      }
    }

    private void finish() {
      final Set<Cid> headsNow;
      final boolean complete;
      boolean historyCompleted = false;
      synchronized (this) {
        if (truncated) {
          count("truncated");
        }
        synchronized (lock) {
          if (truncated) {
            for (final Item item : queue) {
              if (!missing.containsKey(item.cid()) && !isVerified(item.cid())) {
                addMissing(item.cid(), Retry.now());
              }
            }
          }
          if (walking && missing.isEmpty()) {
            // Every block a verified entry names is verified or refused: all are complete.
            // (An entry another join links after this point is tracked one by one again.)
            walking = false;
            walkingDirty = true;
            historyCompleted = true;
            count("histories-completed");
            LOG.info("{}: history of {} entries complete", address, size);
          }
          if (!added.isEmpty() || !unavailable.isEmpty() || !rejected.isEmpty() || truncated
              || unsaved || walkingDirty) {
            try {
              persist();
              unsaved = false;
            } catch (final StoreUnavailableException e) {
              // Kept in memory; the next join writes it (the log is not complete until then).
              unsaved = true;
              count("store-unavailable");
              LOG.debug("{}: log state not written now: {}", address, e.getMessage());
            }
          }
          report();
          compact();
          headsNow = Set.copyOf(heads);
          complete = !walking && unresolved.isEmpty() && missing.isEmpty() && !unsaved;
        }
      }
      result.complete(new JoinResult(added, rejected, unavailable, truncated, headsNow,
          completed, complete, historyCompleted));
    }
  }

  /**
   * Whether {@code cid} is a verified entry of this log: in memory (recent, not yet persisted,
   * incomplete) or marked in the datastore; caller holds {@link #lock}.
   */
  private boolean isVerified(final Cid cid) {
    if (unpersisted.contains(cid) || unresolved.containsKey(cid) || memory.isVerified(cid)) {
      return true;
    }
    if (datastore.get(entryKey(cid)).isPresent()) {
      memory.verified(cid);
      return true;
    }
    return false;
  }

  /**
   * Puts {@code cid} on the frontier if this log's and all logs' budget of missing blocks allow,
   * else counts the bound; caller holds {@link #lock}.
   */
  private void addMissing(final Cid cid, final Retry retry) {
    report();
    final String bound = memory.missingBound(missing.size() + 1);
    if (bound == null) {
      missing.put(cid, retry);
      if (walking) {
        // Not named by a verified entry (those are put on the frontier by link).
        unnamed.add(cid);
      }
      report();
    } else {
      count(bound);
    }
  }

  /**
   * Replaces the empty maps and sets by new ones: a hash table never shrinks, and one long join
   * (a first sync walks the whole history back from its head, every entry incomplete until the
   * first one arrives) would leave each with room for the whole history; caller holds
   * {@link #lock}.
   */
  private void compact() {
    if (unresolved.isEmpty()) {
      unresolved = new HashMap<>();
    }
    if (waiting.isEmpty()) {
      waiting = new HashMap<>();
    }
    if (missing.isEmpty()) {
      missing = new LinkedHashMap<>();
    }
    if (unnamed.isEmpty()) {
      unnamed = new HashSet<>();
    }
    if (unpersisted.isEmpty()) {
      unpersisted = new HashSet<>();
    }
  }

  /** Tells the node's {@link LogMemory} this log's sizes; caller holds {@link #lock}. */
  private void report() {
    memory.report(unresolved.size(), missing.size());
  }

  private String entryKey(final Cid cid) {
    return keyPrefix + "e/" + cid;
  }

  /**
   * Adds a verified entry to the log, the heads and the completeness bookkeeping; caller holds
   * {@link #lock}. Returns the counter naming why it was not added (a bound), or null.
   *
   * @param done receives the entries this one completes (itself included)
   * @param follow receives the parents to fetch
   * @param fresh a newly verified entry (counted, a head, its marker to write); false: an
   *     incomplete entry of the stored log, re-linked at load
   */
  private String link(final Entry entry, final List<Cid> done, final List<Cid> follow,
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
      if (!missing.containsKey(parent)) {
        newMissing++;
      }
    }
    if (bounded && !open.isEmpty()) {
      report();
      final String missingBound = memory.missingBound(
          missing.size() + newMissing - (missing.containsKey(cid) ? 1 : 0));
      if (missingBound != null) {
        return missingBound;
      }
      if (!walking) {
        final String incompleteBound = memory.incompleteBound(unresolved.size() + 1);
        if (incompleteBound != null) {
          count(incompleteBound);
          walkHistory();
        }
      }
    }
    final boolean named = missing.remove(cid) != null && !unnamed.remove(cid);
    if (fresh) {
      size++;
      memory.verified(cid);
      unpersisted.add(cid);
      for (final Cid parent : parents) {
        heads.remove(parent);
      }
      // A head unless a verified entry names it: one waits on it, or, while the history is
      // walked (nothing waits), it was put on the frontier by one.
      if (walking ? !named : !waiting.containsKey(cid)) {
        heads.add(cid);
      }
    }
    for (final Cid parent : absent) {
      if (!missing.containsKey(parent) && (!bounded || memory.missingBound(missing.size() + 1)
          == null)) {
        missing.put(parent, Retry.now());
      }
      // Named by a verified entry now, whoever put it on the frontier.
      unnamed.remove(parent);
      follow.add(parent);
    }
    if (walking) {
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
   * The incomplete entries would exceed their budget: the log forgets them and walks the history
   * with its frontier alone, complete once the frontier is empty; caller holds {@link #lock}.
   */
  private void walkHistory() {
    // Every block an incomplete entry waits on is verified and incomplete, or on the frontier;
    // one left off it (restored over a smaller share) goes back, or the walk could end early.
    for (final Cid block : waiting.keySet()) {
      if (!unresolved.containsKey(block) && !missing.containsKey(block)) {
        missing.put(block, Retry.now());
      }
    }
    // A block of the frontier is named by a verified entry exactly when one waits on it (an
    // entry with an absent parent is incomplete).
    unnamed = new HashSet<>(missing.keySet());
    unnamed.removeAll(waiting.keySet());
    final int forgotten = unresolved.size();
    for (final Cid cid : unresolved.keySet()) {
      leftIncomplete(cid);
    }
    unresolved = new HashMap<>();
    waiting = new HashMap<>();
    walking = true;
    walkingDirty = true;
    count("history-walks");
    report();
    LOG.info("{}: {} entries wait for their history: walking it with its frontier alone, complete"
        + " once the frontier is empty", address, forgotten);
  }

  /**
   * {@code cid} is complete (or refused): the entries waiting on it count one parent less, and
   * those left with none complete in turn; caller holds {@link #lock}.
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

  /** {@code cid} became incomplete: its key is to be written; caller holds {@link #lock}. */
  private void becameIncomplete(final Cid cid) {
    if (!incompleteGone.remove(cid)) {
      incompleteAdded.add(cid);
    }
  }

  /** {@code cid} is no longer incomplete: its key, if written, goes; caller holds {@link #lock}. */
  private void leftIncomplete(final Cid cid) {
    if (!incompleteAdded.remove(cid)) {
      incompleteGone.add(cid);
    }
  }

  private String incompleteKey(final Cid cid) {
    return keyPrefix + "i/" + cid;
  }

  /** Stores a verified identity's block (re-encoded: dag-cbor is canonical) if not held yet. */
  private void storeIdentity(final Identity identity) {
    if (identity == null || blockstore.has(identity.hash())) {
      return;
    }
    final byte[] block = identity.encode();
    if (DagCbor.cid(block).equals(identity.hash())) {
      blockstore.stage(identity.hash(), block);
    } else {
      count("identity-not-stored");
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
    final Map<String, byte[]> puts = new LinkedHashMap<>();
    final List<String> deletes = new ArrayList<>();
    // Every verified entry not marked yet: this join's, and those of a join whose write failed.
    final List<Cid> marked = new ArrayList<>(unpersisted);
    for (final Cid cid : marked) {
      puts.put(entryKey(cid), MARKER);
    }
    puts.put(keyPrefix + "count", Long.toString(size).getBytes(StandardCharsets.US_ASCII));
    puts.put(keyPrefix + "heads", encodeCids(heads.stream().limit(BATCH).toList()));
    if (scoped) {
      puts.put(sharedHeadsKey, encodeCids(heads.stream().limit(BATCH).toList()));
    }
    if (missing.isEmpty()) {
      deletes.add(keyPrefix + "pending");
    } else {
      puts.put(keyPrefix + "pending", encodeCids(missing.keySet()));
    }
    if (walking) {
      puts.put(keyPrefix + "walk", encodeCids(unnamed));
    } else if (walkingDirty) {
      deletes.add(keyPrefix + "walk");
    }
    for (final Cid cid : incompleteAdded) {
      puts.put(incompleteKey(cid), MARKER);
    }
    for (final Cid cid : incompleteGone) {
      deletes.add(incompleteKey(cid));
    }
    for (int i = 0; i < legacyRecords; i++) {
      deletes.add(keyPrefix + "incomplete/" + i);
    }
    datastore.write(puts, deletes);
    incompleteAdded = new HashSet<>();
    incompleteGone = new HashSet<>();
    legacyRecords = 0;
    walkingDirty = false;
    marked.forEach(unpersisted::remove);
  }

  /**
   * Loads the stored log: its count, heads, frontier and incomplete entries (re-linked, so the
   * entries waiting on each missing block are known again). Nothing else is read: the verified
   * entries stay in the datastore. A store of the earlier layout (lists of every entry) is
   * converted once.
   */
  private void load() {
    final Optional<byte[]> count = datastore.get(keyPrefix + "count");
    if (count.isEmpty()) {
      loadListed();
      return;
    }
    synchronized (lock) {
      size = Long.parseLong(new String(count.get(), StandardCharsets.US_ASCII));
      datastore.get(keyPrefix + "heads").ifPresent(bytes -> heads.addAll(decodeCids(bytes)));
      datastore.get(keyPrefix + "walk").ifPresent(bytes -> {
        walking = true;
        unnamed.addAll(decodeCids(bytes));
      });
      datastore.get(keyPrefix + "pending").ifPresent(bytes -> {
        for (final Cid cid : decodeCids(bytes)) {
          // Restored as written (it was within the bounds then), up to this log's share; whole
          // while a history is walked, which ends when the frontier is empty.
          if (walking || missing.size() < memory.missingShare()) {
            missing.putIfAbsent(cid, Retry.now());
          }
        }
      });
      final Set<Cid> incomplete = new LinkedHashSet<>();
      final String incompletePrefix = keyPrefix + "i/";
      for (final Datastore.Entry e : datastore.scan(incompletePrefix)) {
        try {
          incomplete.add(Cid.parse(e.key().substring(incompletePrefix.length())));
        } catch (final MultiformatException ex) {
          continue;
        }
      }
      // The earlier layout: lists of 10,000 CIDs, rewritten as keys by the next write.
      final List<Cid> listed = new ArrayList<>();
      for (final Datastore.Entry e : datastore.scan(keyPrefix + "incomplete/")) {
        listed.addAll(decodeCids(e.value()));
        legacyRecords++;
      }
      incomplete.addAll(listed);
      // Placeholders first: an incomplete parent re-linked later still counts as open.
      for (final Cid cid : incomplete) {
        unresolved.put(cid, Integer.MAX_VALUE);
      }
      int lost = 0;
      for (final Cid cid : incomplete) {
        final Optional<byte[]> bytes = blockstore.get(cid);
        if (bytes.isEmpty()) {
          if (unresolved.remove(cid) != null) {
            leftIncomplete(cid);
          }
          lost++;
          continue;
        }
        link(Entry.decode(cid, bytes.get()), new ArrayList<>(), new ArrayList<>(), false, false);
      }
      for (final Cid cid : listed) {
        if (unresolved.containsKey(cid)) {
          becameIncomplete(cid);
        }
      }
      if (lost > 0) {
        LOG.warn("{}: {} verified entries are no longer in the blockstore", address, lost);
      }
    }
  }

  /** The earlier layout: every entry listed; re-linked once and written in this layout. */
  private void loadListed() {
    final List<Cid> listed = new ArrayList<>();
    final List<String> old = new ArrayList<>();
    final String entriesPrefix = keyPrefix + "entries/";
    for (final Datastore.Entry e : datastore.scan(entriesPrefix)) {
      old.add(e.key());
      try {
        listed.add(Cid.parse(e.key().substring(entriesPrefix.length())));
      } catch (final MultiformatException ex) {
        continue;
      }
    }
    for (final Datastore.Entry e : datastore.scan(keyPrefix + "batches/")) {
      old.add(e.key());
      listed.addAll(decodeCids(e.value()));
    }
    if (listed.isEmpty()) {
      return;
    }
    int lost = 0;
    synchronized (lock) {
      final List<Entry> relinked = new ArrayList<>();
      for (final Cid cid : listed) {
        if (isVerified(cid)) {
          continue;
        }
        final Optional<byte[]> bytes = blockstore.get(cid);
        if (bytes.isEmpty()) {
          // The block was garbage-collected or lost: a later join fetches it again.
          lost++;
          continue;
        }
        final Entry entry = Entry.decode(cid, bytes.get());
        link(entry, new ArrayList<>(), new ArrayList<>(), false, true);
        relinked.add(entry);
      }
      datastore.get(keyPrefix + "pending").ifPresent(bytes -> {
        for (final Cid cid : decodeCids(bytes)) {
          if (missing.size() < memory.missingShare() && !isVerified(cid)) {
            missing.putIfAbsent(cid, Retry.now());
          }
        }
      });
      persist();
      datastore.write(Map.of(), old);
    }
    if (lost > 0) {
      LOG.warn("{}: {} verified entries are no longer in the blockstore", address, lost);
    }
    LOG.info("{}: log of {} entries converted to per-entry markers", address, size);
  }

  private static byte[] encodeCids(final Collection<Cid> cids) {
    final List<DagCborValue> items = new ArrayList<>(cids.size());
    for (final Cid cid : cids) {
      items.add(DagCborValue.of(cid.toString(Multibase.Base.BASE58BTC)));
    }
    return DagCbor.encode(DagCborValue.list(items));
  }

  private static List<Cid> decodeCids(final byte[] bytes) {
    final List<Cid> out = new ArrayList<>();
    try {
      for (final DagCborValue item : DagCbor.decode(bytes).asList().items()) {
        out.add(Cid.parse(item.asText()));
      }
    } catch (final DagCborException | MultiformatException e) {
      LOG.warn("unreadable persisted CID list: {}", e.getMessage());
    }
    return out;
  }

  private static Throwable unwrap(final Throwable error) {
    Throwable t = error;
    while (t instanceof CompletionException && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }
}
