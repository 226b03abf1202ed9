package io.relaypinner.orbitdb.log;

import io.relaypinner.ipfs.blockstore.Blockstore;
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
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Deque;
import java.util.EnumMap;
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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The verified replica of one OrbitDB database's oplog ({@code src/oplog/log.js}
 * {@code joinEntry}): joining a head walks {@code next} and {@code refs} back through the
 * {@link BlockFetcher} (blocks already in the blockstore are read, not fetched), verifies every
 * entry with the {@link EntryVerifier}, and stores an entry block in the blockstore only once it
 * verified. Rejected entries are counted by reason, never stored, and their links not followed.
 *
 * <p>Heads are the verified entries that no other verified entry references through
 * {@code next} or {@code refs}: what this node sends in a heads exchange. The set of verified
 * entries, the heads and the frontier a truncated join left behind are persisted in the
 * {@link Datastore} under {@code /orbitdb/logs/<manifest CID>/}.
 *
 * <p>Limits per join ({@link LogConfig}): concurrent fetches, entries, depth, fetch timeout; the
 * visited set guards against cycles. Thread-safe: joins may run concurrently.
 */
public final class OrbitDbLog {
  private static final Logger LOG = LoggerFactory.getLogger(OrbitDbLog.class);

  /** Most frontier CIDs kept for later joins (unfetchable or beyond a join's limits). */
  public static final int MAX_PENDING = 100_000;

  private final OrbitDbAddress address;
  private final EntryVerifier verifier;
  private final Blockstore blockstore;
  private final BlockFetcher fetcher;
  private final Datastore datastore;
  private final LogConfig config;
  private final Executor executor;
  private final String keyPrefix;
  private final Object lock = new Object();
  private final Set<Cid> index = new HashSet<>();
  private final Set<Cid> referenced = new HashSet<>();
  private final Set<Cid> heads = new LinkedHashSet<>();
  private final Set<Cid> pending = new LinkedHashSet<>();
  private final Map<Cid, Boolean> rejectedCids;
  private final Map<String, LongAdder> counters = new ConcurrentHashMap<>();

  /**
   * Opens the replica, loading its persisted state.
   *
   * @param executor runs decoding and verification (never a Netty event loop)
   */
  public OrbitDbLog(final OrbitDbAddress address, final EntryVerifier verifier,
      final Blockstore blockstore, final BlockFetcher fetcher, final Datastore datastore,
      final LogConfig config, final Executor executor) {
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
    this.keyPrefix = "/orbitdb/logs/" + address.manifest().toString(Multibase.Base.BASE58BTC)
        + "/";
    final int rejectedCacheSize = config.rejectedCacheSize();
    this.rejectedCids = java.util.Collections.synchronizedMap(
        new LinkedHashMap<>(16, 0.75f, false) {
          private static final long serialVersionUID = 1L;

          @Override
          protected boolean removeEldestEntry(final Map.Entry<Cid, Boolean> eldest) {
            return size() > rejectedCacheSize;
          }
        });
    load();
  }

  public OrbitDbAddress address() {
    return address;
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
      return index.contains(cid);
    }
  }

  /** The number of verified entries. */
  public int size() {
    synchronized (lock) {
      return index.size();
    }
  }

  /**
   * Every verified entry, decoded from the blockstore, in log order (Lamport time, then clock
   * id): for reading payloads and for keyvalue state.
   */
  public List<Entry> entries() {
    final List<Cid> cids;
    synchronized (lock) {
      cids = new ArrayList<>(index);
    }
    final List<Entry> out = new ArrayList<>(cids.size());
    for (final Cid cid : cids) {
      blockstore.get(cid).ifPresent(bytes -> out.add(Entry.decode(cid, bytes)));
    }
    out.sort(Entry.CLOCK_ORDER);
    return out;
  }

  /** Entry CIDs a truncated join left to fetch. */
  public Set<Cid> pending() {
    synchronized (lock) {
      return Set.copyOf(pending);
    }
  }

  /**
   * Counters: {@code accepted}, {@code rejected.<reason>}, {@code unavailable} (the entry or its
   * identity block could not be fetched; kept in {@link #pending()} for a later join),
   * {@code truncated}, {@code duplicate}.
   */
  public Map<String, Long> counters() {
    final Map<String, Long> out = new java.util.TreeMap<>();
    counters.forEach((k, v) -> out.put(k, v.sum()));
    return out;
  }

  private void count(final String name) {
    counters.computeIfAbsent(name, k -> new LongAdder()).increment();
  }

  /**
   * Forgets which entries were rejected, so that they are fetched and verified again: call it
   * when the access controller changed (a grant may admit an entry refused before).
   */
  public void forgetRejections() {
    rejectedCids.clear();
  }

  /** Joins the entry with this CID (a head a peer named) and everything it links to. */
  public CompletableFuture<JoinResult> join(final Cid head) {
    final Join join = new Join();
    join.enqueue(head, 0);
    return join.start();
  }

  /**
   * Joins an entry given as block bytes (a heads-exchange frame or a pubsub message) and
   * everything it links to: the same verification, the head itself needs no fetch.
   */
  public CompletableFuture<JoinResult> joinBlock(final byte[] block) {
    final Join join = new Join();
    final Entry entry;
    try {
      entry = Entry.decode(block);
    } catch (final BadPeerException e) {
      LOG.debug("{}: malformed entry: {}", address, e.getMessage());
      join.reject(null, RejectReason.MALFORMED_ENTRY);
      return join.start();
    }
    join.enqueueDecoded(entry, 0);
    return join.start();
  }

  /** Continues the frontier earlier truncated joins left, if any. */
  public CompletableFuture<JoinResult> resume() {
    return new Join().start();
  }

  /** One walk from some heads; single-use. */
  private final class Join {
    private final Deque<Item> queue = new ArrayDeque<>();
    private final Set<Cid> seen = new HashSet<>();
    private final List<Entry> added = new ArrayList<>();
    private final Map<RejectReason, Integer> rejected = new EnumMap<>(RejectReason.class);
    private final List<Cid> unavailable = new ArrayList<>();
    private final CompletableFuture<JoinResult> result = new CompletableFuture<>();
    private int inFlight;
    private int processed;
    private boolean truncated;

    private record Item(Cid cid, Entry entry, int depth) {}

    void enqueue(final Cid cid, final int depth) {
      if (seen.add(cid)) {
        queue.add(new Item(cid, null, depth));
      }
    }

    void enqueueDecoded(final Entry entry, final int depth) {
      if (seen.add(entry.cid())) {
        queue.add(new Item(entry.cid(), entry, depth));
      }
    }

    synchronized void reject(final Cid cid, final RejectReason reason) {
      rejected.merge(reason, 1, Integer::sum);
      count("rejected." + reason.label());
      if (cid != null && reason != RejectReason.IDENTITY_UNAVAILABLE) {
        rejectedCids.put(cid, Boolean.TRUE);
      }
    }

    CompletableFuture<JoinResult> start() {
      synchronized (lock) {
        for (final Cid cid : pending) {
          if (seen.add(cid)) {
            queue.add(new Item(cid, null, 0));
          }
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
          if (contains(item.cid())) {
            count("duplicate");
            continue;
          }
          if (rejectedCids.containsKey(item.cid())) {
            continue;
          }
          if (processed >= config.maxEntriesPerJoin() || item.depth() > config.maxDepth()) {
            truncated = true;
            queue.addFirst(item);
            break;
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
      return entry.thenCompose(e -> verifier.verify(e).thenApply(identity -> e))
          .handle((e, error) -> {
            if (error == null) {
              accept(e, item.depth());
              return null;
            }
            final Throwable cause = unwrap(error);
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
            }
            return null;
          });
    }

    private CompletableFuture<byte[]> bytes(final Cid cid) {
      final Optional<byte[]> held = blockstore.get(cid);
      if (held.isPresent()) {
        return CompletableFuture.completedFuture(held.get());
      }
      return fetcher.fetch(cid).orTimeout(config.fetchTimeout().toMillis(),
          TimeUnit.MILLISECONDS);
    }

    private void accept(final Entry entry, final int depth) {
      final Cid cid = entry.cid();
      if (!blockstore.has(cid)) {
        blockstore.put(cid, entry.block());
      }
      datastore.put(keyPrefix + "entries/" + cid.toString(Multibase.Base.BASE58BTC),
          new byte[0]);
      final boolean fresh;
      synchronized (lock) {
        fresh = index.add(cid);
        if (fresh) {
          link(entry);
          pending.remove(cid);
        }
      }
      if (!fresh) {
        count("duplicate");
        return;
      }
      count("accepted");
      synchronized (this) {
        added.add(entry);
        for (final Cid next : entry.next()) {
          enqueue(next, depth + 1);
        }
        for (final Cid ref : entry.refs()) {
          enqueue(ref, depth + 1);
        }
      }
    }

    private void finish() {
      final Set<Cid> headsNow;
      synchronized (this) {
        if (truncated) {
          count("truncated");
        }
        synchronized (lock) {
          if (truncated) {
            for (final Item item : queue) {
              if (pending.size() < MAX_PENDING && !index.contains(item.cid())) {
                pending.add(item.cid());
              }
            }
          }
          for (final Cid missing : unavailable) {
            if (pending.size() < MAX_PENDING) {
              pending.add(missing);
            }
          }
          headsNow = Set.copyOf(heads);
          persist();
        }
      }
      result.complete(new JoinResult(added, rejected, unavailable, truncated, headsNow));
    }
  }

  /** Adds an entry's links to the head bookkeeping; caller holds {@link #lock}. */
  private void link(final Entry entry) {
    for (final Cid next : entry.next()) {
      referenced.add(next);
      heads.remove(next);
    }
    for (final Cid ref : entry.refs()) {
      referenced.add(ref);
      heads.remove(ref);
    }
    if (!referenced.contains(entry.cid())) {
      heads.add(entry.cid());
    }
  }

  /** Writes heads and pending frontier; caller holds {@link #lock}. */
  private void persist() {
    datastore.put(keyPrefix + "heads", encodeCids(heads));
    if (pending.isEmpty()) {
      datastore.delete(keyPrefix + "pending");
    } else {
      datastore.put(keyPrefix + "pending", encodeCids(pending));
    }
  }

  private void load() {
    final String entriesPrefix = keyPrefix + "entries/";
    int missing = 0;
    for (final Datastore.Entry e : datastore.scan(entriesPrefix)) {
      final Cid cid;
      try {
        cid = Cid.parse(e.key().substring(entriesPrefix.length()));
      } catch (final MultiformatException ex) {
        continue;
      }
      final Optional<byte[]> bytes = blockstore.get(cid);
      if (bytes.isEmpty()) {
        // The block was garbage-collected or lost: forget it, a later join fetches it again.
        datastore.delete(e.key());
        missing++;
        continue;
      }
      index.add(cid);
      link(Entry.decode(cid, bytes.get()));
    }
    // Heads are derived from the verified entries; the persisted list is for other readers.
    datastore.get(keyPrefix + "pending").ifPresent(bytes -> pending.addAll(decodeCids(bytes)));
    if (missing > 0) {
      LOG.warn("{}: {} verified entries are no longer in the blockstore", address, missing);
    }
    if (!index.isEmpty()) {
      persist();
    }
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
