package io.relaypinner.libp2p.protocol.kad;

import java.nio.ByteBuffer;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * Provides a set of keys (content multihashes) to the DHT and keeps them provided, without Netty:
 * the engine of "reprovide sweep" (Kubo's default since 0.39), with our own code.
 *
 * <p><b>Why regions.</b> One closest-peers lookup per key costs tens of requests; with 100,000
 * pinned CIDs re-provided every 22 h that is millions of requests for lookups alone. Keys whose
 * points (SHA-256 of the key) share a long prefix of the keyspace share their closest peers, so a
 * run groups its keys by prefix and looks up <em>one</em> key per region:
 *
 * <ol>
 *   <li>A run starts with one region, depth 0 (the whole keyspace), holding all its keys.
 *   <li>A region's lookup finds the k peers closest to one of its keys. If the farthest of them
 *       lies outside the region (shares fewer than {@code depth} leading bits with the key), the
 *       region holds fewer than k peers and all of them were found: every key of the region has
 *       its closest peers among them, and the region is a <em>leaf</em> (also when it holds one
 *       key, when the lookup found fewer than k peers, or at depth {@link #MAX_DEPTH}).
 *   <li>Otherwise the region is split by the next bit. The half holding the looked-up key is
 *       decided with the same answer (no new lookup); the other half, if it has keys, gets its
 *       own lookup.
 *   <li>Each key of a leaf is sent ADD_PROVIDER by each peer found.
 * </ol>
 *
 * So a run costs about one lookup per leaf region (the network's size / k of them, whatever the
 * number of keys), plus one ADD_PROVIDER per key and peer. For keys of a region holding fewer
 * than k peers, the closest peers outside it are taken from the lookup of the region's key: they
 * are right to within the order of peers that share the region's parent prefix, as in Kubo.
 *
 * <p><b>When.</b> {@link #add} queues a key: queued keys are provided together (one run, so
 * batched by region too) {@link Settings#batchDelay} after the first of them was queued. Keys
 * whose lookup found no peer at all are queued again for the next batch; while the routing
 * table is empty, batches wait (every batch delay) without looking anything up. Every
 * {@link Settings#interval} (22 h, as go and js, within the 48 h record lifetime) a sweep
 * re-provides every key. {@link #remove} forgets a key: it is no longer sent, even by a run
 * already under way.
 *
 * <p><b>Bounds.</b> At most {@link Settings#maxKeys} keys (more are refused and counted),
 * {@link Settings#maxLookups} lookups and {@link Settings#maxSends} ADD_PROVIDERs in flight, and at
 * most {@link Settings#sendsPerSecond} ADD_PROVIDERs per second (a token bucket on the clock).
 * Memory: the keys, and per run the list of its keys.
 *
 * <p>Thread-safe; the work runs on whatever thread completes a lookup or a request, and on the
 * timer's.
 */
public final class Reprovider {
  /** Deepest split: 2^24 regions is beyond any DHT's size / k. */
  static final int MAX_DEPTH = 24;

  /** The engine's settings. */
  public record Settings(Duration interval, Duration batchDelay, int maxKeys, int maxLookups,
      int maxSends, int sendsPerSecond) {
    public Settings {
      Objects.requireNonNull(interval, "interval");
      Objects.requireNonNull(batchDelay, "batchDelay");
      if (interval.isNegative() || interval.isZero() || batchDelay.isNegative() || maxKeys < 1
          || maxLookups < 1 || maxSends < 1 || sendsPerSecond < 1) {
        throw new IllegalArgumentException("reprovider settings must be positive");
      }
    }

    /** 22 h, 10 s, 100,000 keys, 4 lookups, 32 sends in flight, 200 sends/s. */
    public static Settings defaults() {
      return new Settings(Duration.ofHours(22), Duration.ofSeconds(10), 100_000, 4, 32, 200);
    }
  }

  /** A key of a run with its point. */
  private record Key(ByteBuffer id, byte[] bytes, KadKey point) {}

  /**
   * A part of the keyspace (a prefix of {@code depth} bits), the keys of a run in it, and the
   * peers the lookup that split its parent found (candidates too: they lie in the parent).
   */
  private record Region(int depth, List<Key> keys, List<KadPeer> inherited) {}

  /** A leaf region's keys and the peers to send each of them to, sent key by key. */
  private static final class Leaf {
    final List<Key> keys;
    /** The candidates: the leaf's lookup's peers and those inherited. */
    final List<KadPeer> pool;
    /** The current key's k closest of the pool. */
    List<KadPeer> peers = List.of();
    int key;
    int peer;
    KeyState current;

    Leaf(final List<Key> keys, final List<KadPeer> pool) {
      this.keys = keys;
      this.pool = pool;
    }
  }

  /** One key's sends of a leaf: done when none is left. */
  private static final class KeyState {
    int remaining;
    int ok;

    KeyState(final int remaining) {
      this.remaining = remaining;
    }
  }

  private final KadClient client;
  private final Clock clock;
  private final KadLookup.Timer timer;
  private final Supplier<KadPeer> self;
  private final Settings settings;
  private final int k;
  private final Duration requestTimeout;

  private final Set<ByteBuffer> keys = new LinkedHashSet<>();
  private final Set<ByteBuffer> queued = new LinkedHashSet<>();
  private final Deque<Region> regions = new ArrayDeque<>();
  private final Deque<Leaf> leaves = new ArrayDeque<>();
  private int inRuns;
  private int lookupsInFlight;
  private int sendsInFlight;
  private double tokens;
  private long refilledNanos;
  private boolean batchScheduled;
  private boolean wakeScheduled;
  private boolean pumping;
  private boolean again;
  private boolean closed;
  private Runnable cancelSweep = () -> {};
  private final Map<String, Long> counters = new TreeMap<>();

  /**
   * @param self our id and the addresses to announce, best first (read at each ADD_PROVIDER, so
   *     a changed address list is announced from then on)
   */
  public Reprovider(final KadClient client, final KadConfig config, final Clock clock,
      final KadLookup.Timer timer, final Supplier<KadPeer> self, final Settings settings) {
    this.client = Objects.requireNonNull(client, "client");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.timer = Objects.requireNonNull(timer, "timer");
    this.self = Objects.requireNonNull(self, "self");
    this.settings = Objects.requireNonNull(settings, "settings");
    this.k = config.k();
    this.requestTimeout = config.requestTimeout();
    this.tokens = settings.sendsPerSecond();
    this.refilledNanos = nanos();
    for (final String name : List.of("provided", "failed", "lookups", "sends", "sends_failed",
        "sweeps", "batches", "refused_full", "removed")) {
      counters.put(name, 0L);
    }
  }

  /** Starts the sweeps: the first after one interval (new keys are provided by their batches). */
  public synchronized void start() {
    scheduleSweep();
  }

  /** Stops scheduling; runs under way end without sending more. */
  public void close() {
    final Runnable cancel;
    synchronized (this) {
      closed = true;
      regions.clear();
      leaves.clear();
      queued.clear();
      inRuns = 0;
      cancel = cancelSweep;
    }
    cancel.run();
  }

  /**
   * Adds a key to provide (a multihash's bytes); queued for the next batch if new. False when the
   * set is full (counted {@code refused_full}).
   */
  public boolean add(final byte[] key) {
    final ByteBuffer id = ByteBuffer.wrap(key.clone());
    synchronized (this) {
      if (closed) {
        return false;
      }
      if (keys.contains(id)) {
        return true;
      }
      if (keys.size() >= settings.maxKeys()) {
        count("refused_full");
        return false;
      }
      keys.add(id);
      queued.add(id);
      if (batchScheduled) {
        return true;
      }
      batchScheduled = true;
    }
    timer.schedule(this::batch, settings.batchDelay());
    return true;
  }

  /** Forgets a key: it is no longer provided nor re-provided. */
  public synchronized boolean remove(final byte[] key) {
    final ByteBuffer id = ByteBuffer.wrap(key);
    queued.remove(id);
    final boolean removed = keys.remove(id);
    if (removed) {
      count("removed");
    }
    return removed;
  }

  public synchronized boolean contains(final byte[] key) {
    return keys.contains(ByteBuffer.wrap(key));
  }

  /** Keys to provide. */
  public synchronized int size() {
    return keys.size();
  }

  /** Keys waiting: queued for a batch, or in a run and not yet sent to every peer. */
  public synchronized int backlog() {
    return queued.size() + inRuns;
  }

  /**
   * {@code provided} (keys sent to at least one peer), {@code failed} (keys no peer accepted or
   * no lookup found peers for), {@code lookups}, {@code sends}, {@code sends_failed},
   * {@code sweeps}, {@code batches}, {@code refused_full}, {@code removed}, and the gauges
   * {@code keys} and {@code backlog}.
   */
  public synchronized Map<String, Long> counters() {
    final Map<String, Long> out = new TreeMap<>(counters);
    out.put("keys", (long) keys.size());
    out.put("backlog", (long) backlog());
    return out;
  }

  /** Starts a sweep of every key now (tests, or an operator's request). */
  public void sweepNow() {
    synchronized (this) {
      if (closed) {
        return;
      }
      count("sweeps");
      run(new ArrayList<>(keys), false);
    }
    pump();
  }

  private void sweep() {
    synchronized (this) {
      if (closed) {
        return;
      }
      scheduleSweep();
    }
    sweepNow();
  }

  private void scheduleSweep() {
    if (!closed) {
      cancelSweep = timer.schedule(this::sweep, settings.interval());
    }
  }

  private void batch() {
    synchronized (this) {
      batchScheduled = false;
      if (closed || queued.isEmpty()) {
        return;
      }
      if (client.table().size() == 0) {
        // No peer to ask (bootstrap not ended, or none configured): wait, at no cost.
        batchScheduled = true;
        timer.schedule(this::batch, settings.batchDelay());
        return;
      }
      count("batches");
      final List<ByteBuffer> batch = new ArrayList<>(queued);
      queued.clear();
      run(batch, true);
    }
    pump();
  }

  /** Queues a run of {@code ids}: one region holding them all; batches go before sweeps. */
  private void run(final List<ByteBuffer> ids, final boolean first) {
    final List<Key> run = new ArrayList<>(ids.size());
    for (final ByteBuffer id : ids) {
      final byte[] bytes = id.array();
      run.add(new Key(id, bytes, KadKey.of(bytes)));
    }
    if (run.isEmpty()) {
      return;
    }
    inRuns += run.size();
    final Region whole = new Region(0, run, List.of());
    if (first) {
      regions.addFirst(whole);
    } else {
      regions.addLast(whole);
    }
  }

  /**
   * Starts what the limits allow. Re-entrant calls (answers completing synchronously) only ask
   * the running pump to go round again, so the stack stays flat.
   */
  private void pump() {
    synchronized (this) {
      if (pumping) {
        again = true;
        return;
      }
      pumping = true;
    }
    while (true) {
      final List<Runnable> actions = new ArrayList<>();
      synchronized (this) {
        again = false;
        takeActions(actions);
        if (actions.isEmpty() && !again) {
          pumping = false;
          return;
        }
      }
      actions.forEach(Runnable::run);
    }
  }

  private void takeActions(final List<Runnable> actions) {
    while (lookupsInFlight < settings.maxLookups() && !regions.isEmpty()) {
      final Region region = regions.pollFirst();
      final List<Key> live = region.keys().stream().filter(key -> keys.contains(key.id()))
          .toList();
      inRuns -= region.keys().size() - live.size();
      if (live.isEmpty()) {
        continue;
      }
      lookupsInFlight++;
      count("lookups");
      final Region target = new Region(region.depth(), live, region.inherited());
      actions.add(() -> lookup(target));
    }
    refill();
    while (!leaves.isEmpty() && sendsInFlight < settings.maxSends() && tokens >= 1) {
      final Leaf leaf = leaves.peekFirst();
      if (leaf.key >= leaf.keys.size()) {
        leaves.pollFirst();
        continue;
      }
      final Key key = leaf.keys.get(leaf.key);
      if (leaf.peer == 0 && !keys.contains(key.id())) {
        leaf.key++;
        inRuns--;
        continue;
      }
      if (leaf.peer == 0) {
        leaf.peers = leaf.pool.stream()
            .sorted(java.util.Comparator.comparing(KadPeer::key, key.point().byDistance()))
            .limit(k).toList();
        leaf.current = new KeyState(leaf.peers.size());
      }
      final KeyState state = leaf.current;
      final KadPeer peer = leaf.peers.get(leaf.peer);
      leaf.peer++;
      if (leaf.peer == leaf.peers.size()) {
        leaf.key++;
        leaf.peer = 0;
      }
      sendsInFlight++;
      tokens--;
      count("sends");
      actions.add(() -> send(key, peer, state));
    }
    if (!leaves.isEmpty() && tokens < 1 && !wakeScheduled && !closed) {
      wakeScheduled = true;
      final long waitNanos = (long) ((1 - tokens) * 1e9 / settings.sendsPerSecond()) + 1;
      actions.add(() -> timer.schedule(() -> {
        synchronized (this) {
          wakeScheduled = false;
        }
        pump();
      }, Duration.ofNanos(waitNanos)));
    }
  }

  private void lookup(final Region region) {
    final Key target = region.keys().get(0);
    CompletableFuture<KadLookup.Result> lookup;
    try {
      lookup = client.closestPeers(target.bytes());
    } catch (final RuntimeException e) {
      lookup = CompletableFuture.failedFuture(e);
    }
    lookup.whenComplete((result, error) -> {
      synchronized (this) {
        lookupsInFlight--;
        if (!closed) {
          place(region, error == null ? result.closest() : List.of(), target.point());
        }
      }
      pump();
    });
  }

  /** Decides a looked-up region: a leaf to send, or split (see the class comment). */
  private void place(final Region region, final List<KadPeer> found, final KadKey target) {
    if (found.isEmpty()) {
      // No peer known (a relay whose bootstrap has not ended, or cut off): the keys wait for
      // the next batch rather than the next sweep, 22 h later.
      inRuns -= region.keys().size();
      counters.merge("failed", (long) region.keys().size(), Long::sum);
      for (final Key key : region.keys()) {
        if (keys.contains(key.id())) {
          queued.add(key.id());
        }
      }
      if (!queued.isEmpty() && !batchScheduled) {
        batchScheduled = true;
        timer.schedule(this::batch, settings.batchDelay());
      }
      return;
    }
    final int depth = region.depth();
    final KadPeer farthest = found.get(found.size() - 1);
    if (region.keys().size() == 1 || found.size() < k || depth >= MAX_DEPTH
        || target.commonPrefixLength(farthest.key()) < depth) {
      final Map<io.relaypinner.multiformats.PeerId, KadPeer> pool = new LinkedHashMap<>();
      for (final KadPeer peer : found) {
        pool.put(peer.id(), peer);
      }
      for (final KadPeer peer : region.inherited()) {
        pool.putIfAbsent(peer.id(), peer);
      }
      leaves.addLast(new Leaf(region.keys(), List.copyOf(pool.values())));
      return;
    }
    final boolean targetBit = target.bit(depth);
    final List<Key> same = new ArrayList<>();
    final List<Key> other = new ArrayList<>();
    for (final Key key : region.keys()) {
      (key.point().bit(depth) == targetBit ? same : other).add(key);
    }
    if (!other.isEmpty()) {
      regions.addFirst(new Region(depth + 1, other, found));
    }
    place(new Region(depth + 1, same, region.inherited()), found, target);
  }

  private void send(final Key key, final KadPeer peer, final KeyState state) {
    final KadMessage add = new KadMessage(KadMessage.Type.ADD_PROVIDER, key.bytes(), List.of(),
        List.of(self.get()), false);
    CompletableFuture<KadMessage> request;
    try {
      request = client.network().request(peer, add);
    } catch (final RuntimeException e) {
      request = CompletableFuture.failedFuture(e);
    }
    final CompletableFuture<KadMessage> sent = request;
    final Runnable cancel = timer.schedule(() -> sent.completeExceptionally(
        new TimeoutException("ADD_PROVIDER")), requestTimeout);
    sent.whenComplete((ok, error) -> {
      cancel.run();
      synchronized (this) {
        sendsInFlight--;
        if (error == null) {
          state.ok++;
        } else {
          count("sends_failed");
        }
        if (--state.remaining == 0 && !closed) {
          inRuns--;
          count(state.ok > 0 ? "provided" : "failed");
        }
      }
      pump();
    });
  }

  private void refill() {
    final long now = nanos();
    final double elapsed = (now - refilledNanos) / 1e9;
    refilledNanos = now;
    tokens = Math.min(settings.sendsPerSecond(), tokens + elapsed * settings.sendsPerSecond());
  }

  private long nanos() {
    return clock.millis() * 1_000_000L;
  }

  private void count(final String name) {
    counters.merge(name, 1L, Long::sum);
  }
}
