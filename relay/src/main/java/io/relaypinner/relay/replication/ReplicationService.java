package io.relaypinner.relay.replication;

import io.relaypinner.ipfs.bitswap.Bitswap;
import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.ipfs.pin.PinResult;
import io.relaypinner.ipfs.pin.PinStore;
import io.relaypinner.libp2p.host.Connection;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.pubsub.PubSub;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.Multibase;
import io.relaypinner.multiformats.PeerId;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.orbitdb.OrbitDbReplica;
import io.relaypinner.orbitdb.OrbitDbReplicas;
import io.relaypinner.orbitdb.access.AccessControllerRef;
import io.relaypinner.orbitdb.heads.HeadsConfig;
import io.relaypinner.orbitdb.heads.HeadsEndpoint;
import io.relaypinner.orbitdb.heads.HeadsExchangeProtocol;
import io.relaypinner.orbitdb.log.Entry;
import io.relaypinner.orbitdb.log.JoinResult;
import io.relaypinner.relay.sync.SyncContext;
import io.relaypinner.relay.sync.SyncEngine;
import io.relaypinner.relay.sync.SyncResult;
import io.relaypinner.relay.sync.SyncTrigger;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The relay's OrbitDB replication (notes/orbitdb-wire.md §1, 3.25–3.28): for every followed
 * database it keeps a verified replica whose blocks (manifest, access controller, identities,
 * entries) are stored and pinned, takes heads from gossipsub messages (the data is the entry
 * block) and from heads exchanges in both directions, and pins the media the entries name.
 *
 * <p>Every trigger goes through the {@link SyncEngine}: a head that arrives (pubsub or heads
 * exchange) or a peer that subscribes to a followed topic is put into the database's inbox and
 * queues a sync; the sync ({@link #sync}, run by the engine in one of its slots, one at a time
 * per database) dials heads exchanges, joins the inbox, waits for updates up to a bounded window,
 * and reports what it found. Heads are answered from the replica (its persisted heads) at any
 * time, also for readers arriving after the writer left.
 *
 * <p>Invariant: a media CID is reported pinned ({@link SyncResult#pinnedMediaCids()},
 * {@link SyncEngine#mediaPinned}) only when its whole DAG is pinned and the log of every database
 * that named it had no missing entries after the join that found it, so every entry referencing
 * it and every entry before those is stored: pinned media implies a replicated log.
 *
 * <p>Thread-safe. Callbacks from event loops only queue work.
 */
public final class ReplicationService implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ReplicationService.class);

  /** Heads kept per database between syncs; beyond it the oldest are dropped (counted). */
  public static final int MAX_INBOX = 1024;
  /** Peers remembered per topic for reconnection on an explicit sync. */
  public static final int MAX_SEEN_PEERS = 64;
  /** Entries naming media that wait for their history, per database. */
  public static final int MAX_AWAITING = 100_000;
  /** How long a heads exchange waits for its database's replica to open. */
  static final Duration HEADS_OPEN_TIMEOUT = Duration.ofSeconds(5);
  /** Heads exchanges dialled at once by one sync. */
  public static final int MAX_DIALS_PER_SYNC = 32;

  /** Limits of the service. */
  public record Config(Duration updateWindow, Duration quietPeriod, Duration dialTimeout,
      int pinConcurrency) {
    /** Wait up to 5 s for an update, 300 ms of quiet ends the wait, 10 s per dial, 4 pins. */
    public static final Config DEFAULT = new Config(Duration.ofSeconds(5),
        Duration.ofMillis(300), Duration.ofSeconds(10), 4);
  }

  private final Host host;
  private final PubSub pubsub;
  private final Bitswap bitswap;
  private final Blockstore blockstore;
  private final PinStore pins;
  private final Executor executor;
  private final OrbitDbReplicas replicas;
  private final HeadsExchangeProtocol headsProtocol;
  private final MediaCidExtractor extractor;
  private final MediaPinQueue pinQueue;
  private final Config config;
  private final Map<OrbitDbAddress, Inbox> inboxes = new ConcurrentHashMap<>();
  private final Set<OrbitDbAddress> wired = ConcurrentHashMap.newKeySet();
  private final Set<Cid> eligibleMedia = ConcurrentHashMap.newKeySet();
  private final Set<Cid> pinnedMedia = ConcurrentHashMap.newKeySet();
  private final Set<Cid> reportedMedia = ConcurrentHashMap.newKeySet();
  /** Blocks (entries with tag-42 media links) whose pin waits for that media. */
  private final Set<Cid> incompletePins = ConcurrentHashMap.newKeySet();
  private final Map<String, LongAdder> counters = new ConcurrentHashMap<>();
  private volatile SyncEngine engine;
  private volatile boolean closed;

  /** What waits for a database's next sync. */
  private static final class Inbox {
    final Deque<byte[]> heads = new ArrayDeque<>();
    final Set<PeerId> dial = new LinkedHashSet<>();
    final Set<PeerId> seen = new LinkedHashSet<>();
    /** Guards {@link #closed} and {@link #awaiting} (not the inbox: event loops take that). */
    final Object mediaLock = new Object();
    /** Entries whose whole history is in the log (memo of {@link #closed}). */
    final Set<Cid> closed = new java.util.HashSet<>();
    /** Entries naming media whose history is not complete yet, with that media. */
    final Map<Cid, Set<Cid>> awaiting = new LinkedHashMap<>();
  }

  /**
   * @param executor runs joins, verification, pins and storage (bounded; never an event loop)
   */
  public ReplicationService(final Host host, final PubSub pubsub, final Bitswap bitswap,
      final Blockstore blockstore, final PinStore pins, final OrbitDbReplicas replicas,
      final MediaCidExtractor extractor, final MediaPinQueue pinQueue, final Executor executor,
      final HeadsConfig headsConfig, final Config config) {
    this.host = Objects.requireNonNull(host, "host");
    this.pubsub = Objects.requireNonNull(pubsub, "pubsub");
    this.bitswap = Objects.requireNonNull(bitswap, "bitswap");
    this.blockstore = Objects.requireNonNull(blockstore, "blockstore");
    this.pins = Objects.requireNonNull(pins, "pins");
    this.replicas = Objects.requireNonNull(replicas, "replicas");
    this.extractor = Objects.requireNonNull(extractor, "extractor");
    this.pinQueue = Objects.requireNonNull(pinQueue, "pinQueue");
    this.executor = Objects.requireNonNull(executor, "executor");
    this.config = Objects.requireNonNull(config, "config");
    this.headsProtocol = new HeadsExchangeProtocol(headsConfig, this::endpoint);
  }

  /**
   * Starts answering the heads protocol and listening to pubsub; syncs are queued on
   * {@code syncEngine}.
   */
  public void start(final SyncEngine syncEngine) {
    this.engine = Objects.requireNonNull(syncEngine, "syncEngine");
    syncEngine.onExplicitRequest(this::onExplicitRequest);
    headsProtocol.register(host.protocols());
    pubsub.addMessageHandler(message -> onPubsubMessage(message.topic(), message.data(),
        message.receivedFrom()));
    pubsub.addSubscriptionListener(this::onSubscriptionChange);
  }

  /** The relay follows {@code topic} now (a peer subscribed, or a restart): sync it. */
  public void onFollow(final String topic) {
    if (!OrbitDbAddress.isValid(topic)) {
      return;
    }
    inboxes.computeIfAbsent(OrbitDbAddress.parse(topic), a -> new Inbox());
    trigger(topic, SyncTrigger.FOLLOW);
  }

  private void trigger(final String topic, final SyncTrigger trigger) {
    final SyncEngine current = engine;
    if (current != null && !closed) {
      current.enqueue(topic, trigger);
    }
  }

  private Optional<Inbox> inbox(final String topic) {
    if (!OrbitDbAddress.isValid(topic)) {
      return Optional.empty();
    }
    return Optional.ofNullable(inboxes.get(OrbitDbAddress.parse(topic)));
  }

  private void onPubsubMessage(final String topic, final byte[] data, final PeerId from) {
    final Optional<Inbox> inbox = inbox(topic);
    if (inbox.isEmpty()) {
      return;
    }
    offer(inbox.get(), data);
    count("heads-pubsub");
    trigger(topic, SyncTrigger.MESSAGE);
  }

  private void offer(final Inbox inbox, final byte[] block) {
    synchronized (inbox) {
      if (inbox.heads.size() >= MAX_INBOX) {
        inbox.heads.pollFirst();
        count("heads-dropped");
      }
      inbox.heads.addLast(block.clone());
      inbox.notifyAll();
    }
  }

  private void onSubscriptionChange(final PeerId peer, final String topic,
      final boolean subscribed) {
    if (!subscribed) {
      return;
    }
    final Optional<Inbox> inbox = inbox(topic);
    if (inbox.isEmpty()) {
      return;
    }
    synchronized (inbox.get()) {
      remember(inbox.get(), peer);
      inbox.get().dial.add(peer);
    }
    trigger(topic, SyncTrigger.MESSAGE);
  }

  private static void remember(final Inbox inbox, final PeerId peer) {
    inbox.seen.remove(peer);
    inbox.seen.add(peer);
    if (inbox.seen.size() > MAX_SEEN_PEERS) {
      inbox.seen.remove(inbox.seen.iterator().next());
    }
  }

  /** The heads-exchange side of a followed database: heads from the replica, heads to the inbox. */
  private Optional<HeadsEndpoint> endpoint(final OrbitDbAddress address) {
    final Inbox inbox = inboxes.get(address);
    if (inbox == null) {
      return Optional.empty();
    }
    return Optional.of(new HeadsEndpoint() {
      @Override
      public CompletableFuture<List<byte[]>> heads() {
        // After a restart a reader may ask before the first sync opened the replica: open it
        // (from the store) rather than answer with no heads.
        return replicas.follow(address)
            .orTimeout(HEADS_OPEN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
            .thenApplyAsync(replica -> replica.log().headBlocks(), executor)
            .exceptionally(error -> List.of());
      }

      @Override
      public void onHead(final byte[] block, final PeerId from) {
        offer(inbox, block);
        synchronized (inbox) {
          remember(inbox, from);
        }
        count("heads-exchange");
        trigger(address.topic(), SyncTrigger.MESSAGE);
      }
    });
  }

  // ------------------------------------------------------------------ sync

  /**
   * One sync of a followed database (run by the engine): opens the replica (manifest and
   * controller over bitswap), dials heads exchanges, joins what arrived, waits for updates up to
   * {@link Config#updateWindow()} (or until quiet once one came), and falls back to a scan of the
   * replicated log for media when none did.
   */
  public SyncResult sync(final SyncContext context) throws Exception {
    final OrbitDbAddress address = OrbitDbAddress.parse(context.address());
    final Inbox inbox = inboxes.computeIfAbsent(address, a -> new Inbox());
    final long start = System.nanoTime();
    final long budget = context.timeout().toNanos() * 8 / 10;
    final long deadline = start + budget;
    final long windowEnd = start + Math.min(config.updateWindow().toNanos(), budget / 2);
    if (replicas.replica(address).isEmpty() && !blockstore.has(address.manifest())
        && bitswap.peerCount() == 0) {
      throw new IllegalStateException("cannot open " + address
          + ": its manifest is not stored here and no peer is connected to fetch it from");
    }
    LOG.debug("sync of {} ({}): opening", address, context.trigger());
    final OrbitDbReplica replica = await(replicas.follow(address), deadline);
    LOG.debug("sync of {}: open, {} entries", address, replica.log().size());
    wire(replica);
    replica.accessControllerDatabase().ifPresent(this::wire);
    context.countOperation();
    executor.execute(() -> pinDatabaseBlocks(replica));

    final Set<PeerId> toDial = new LinkedHashSet<>();
    synchronized (inbox) {
      toDial.addAll(inbox.dial);
      inbox.dial.clear();
    }
    if (context.trigger() != SyncTrigger.MESSAGE) {
      toDial.addAll(pubsub.peers(address.topic()));
      replica.accessControllerDatabase().ifPresent(acDb ->
          toDial.addAll(pubsub.peers(acDb.address().topic())));
    }
    final List<CompletableFuture<?>> exchanges = new ArrayList<>();
    for (final PeerId peer : toDial) {
      if (exchanges.size() >= MAX_DIALS_PER_SYNC) {
        break;
      }
      host.connection(peer).ifPresent(connection -> {
        exchanges.add(exchange(connection, replica));
        replica.accessControllerDatabase().ifPresent(acDb ->
            exchanges.add(exchange(connection, acDb)));
      });
    }

    final List<Entry> added = new ArrayList<>();
    final List<CompletableFuture<JoinResult>> joins = new ArrayList<>();
    long quietSince = System.nanoTime();
    int lastSize = replica.log().size();
    boolean resumed = false;
    while (true) {
      if (context.cancelled() || Thread.currentThread().isInterrupted()) {
        throw new InterruptedException("sync of " + address + " cancelled");
      }
      final List<byte[]> heads;
      synchronized (inbox) {
        heads = new ArrayList<>(inbox.heads);
        inbox.heads.clear();
      }
      // Joins run concurrently; one that hangs (an unfetchable identity, a peer gone) or fails
      // (garbage) only costs its own work, never the sync.
      for (final byte[] head : heads) {
        joins.add(replica.joinBlock(head));
      }
      if (!resumed && !replica.log().pending().isEmpty()) {
        resumed = true;
        joins.add(replica.resume());
      }
      final long now = System.nanoTime();
      final int size = replica.log().size();
      if (!heads.isEmpty() || size != lastSize) {
        // Heads arriving or the log growing (a long history being fetched) is progress.
        quietSince = now;
        lastSize = size;
      }
      final boolean joinsDone = collect(joins, added);
      final boolean exchangesDone = exchanges.stream().allMatch(CompletableFuture::isDone);
      final boolean settled = exchangesDone
          && now - quietSince >= config.quietPeriod().toNanos();
      if (settled && joinsDone && (!added.isEmpty() || now >= windowEnd)) {
        break;
      }
      if (settled && now >= windowEnd) {
        // Joins that make no progress (a head whose identity no peer has, a writer gone) go on
        // without holding the sync; what they add later is pinned all the same.
        count("syncs-left-joins-running");
        break;
      }
      if (now >= deadline) {
        count("syncs-cut-at-deadline");
        break;
      }
      synchronized (inbox) {
        if (inbox.heads.isEmpty()) {
          // Woken by the next head; the timeout re-checks joins, exchanges and the window.
          inbox.wait(50);
        }
      }
    }
    replica.accessControllerDatabase().ifPresent(acDb -> {
      if (!acDb.log().pending().isEmpty()) {
        acDb.resume();
      }
    });

    final boolean receivedUpdate = !added.isEmpty();
    final Set<Cid> media = new LinkedHashSet<>();
    if (receivedUpdate) {
      for (final Entry entry : added) {
        media.addAll(extractor.extract(entry.payload()).cids());
      }
    } else {
      // No update arrived in the window: scan the whole replicated log (and pin what it names).
      final List<Entry> all = replica.log().entries();
      onEntries(replica, all, inbox);
      for (final Entry entry : all) {
        media.addAll(extractor.extract(entry.payload()).cids());
      }
    }
    final List<String> pinnedNow = new ArrayList<>();
    final List<CompletableFuture<Cid>> pinsOfSync = new ArrayList<>();
    for (final Cid cid : media) {
      pinsOfSync.add(pinQueue.pin(cid).thenApply(done -> {
        pinnedMedia.add(done);
        return done;
      }));
    }
    try {
      CompletableFuture.allOf(pinsOfSync.toArray(CompletableFuture[]::new))
          .get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (final ExecutionException | TimeoutException e) {
      // Pins that finish later are reported through the engine.
    }
    for (final Cid cid : media) {
      if (pinnedMedia.contains(cid) && eligibleMedia.contains(cid) && reportedMedia.add(cid)) {
        pinnedNow.add(cid.toString());
      }
    }
    LOG.debug("sync of {}: {} new entries, {} in all, {} media, {} reported pinned", address,
        added.size(), replica.log().size(), media.size(), pinnedNow.size());
    final List<String> extracted = new ArrayList<>(media.size());
    for (final Cid cid : media) {
      extracted.add(cid.toString());
    }
    return new SyncResult(address.toString(), replica.log().size(), added.size(),
        replica.log().heads().size(), receivedUpdate, !receivedUpdate, extracted, pinnedNow);
  }

  /** Moves finished joins' entries into {@code added}; true when none is left running. */
  private boolean collect(final List<CompletableFuture<JoinResult>> joins,
      final List<Entry> added) {
    boolean allDone = true;
    for (final var it = joins.iterator(); it.hasNext();) {
      final CompletableFuture<JoinResult> join = it.next();
      if (!join.isDone()) {
        allDone = false;
        continue;
      }
      it.remove();
      if (join.isCompletedExceptionally()) {
        count("joins-failed");
        continue;
      }
      added.addAll(join.join().added());
    }
    return allDone;
  }

  private CompletableFuture<?> exchange(final Connection connection,
      final OrbitDbReplica replica) {
    return headsProtocol.exchange(connection, replica.address(),
        endpoint(replica.address()).orElseThrow())
        .orTimeout(config.dialTimeout().toMillis(), TimeUnit.MILLISECONDS)
        .handle((result, error) -> {
          count(error == null ? "exchanges-dialled" : "exchanges-failed");
          if (error != null) {
            LOG.debug("{}: heads exchange with {} failed: {}", replica.address(),
                connection.remotePeer(), error.toString());
          }
          return null;
        });
  }

  /**
   * An explicit sync was asked for (also one that coalesces onto a sync already queued or
   * running): re-dial the peers seen on the topic that are not connected now (spec 3.5).
   */
  private void onExplicitRequest(final String address) {
    if (!OrbitDbAddress.isValid(address)) {
      return;
    }
    final Inbox inbox = inboxes.get(OrbitDbAddress.parse(address));
    if (inbox != null) {
      reconnect(OrbitDbAddress.parse(address), inbox);
    }
  }

  /** Explicit sync (spec 3.5): dials peers seen on the topic that are not connected now. */
  private void reconnect(final OrbitDbAddress address, final Inbox inbox) {
    final List<PeerId> seen;
    synchronized (inbox) {
      seen = new ArrayList<>(inbox.seen);
    }
    for (final PeerId peer : seen) {
      if (host.connection(peer).isPresent()) {
        continue;
      }
      host.peerStore().get(peer).ifPresent(info -> {
        for (final Multiaddr addr : info.addresses()) {
          count("reconnects");
          host.dial(addr.withoutPeerId().withPeerId(peer)).whenComplete((c, error) -> {
            if (error == null) {
              synchronized (inbox) {
                inbox.dial.add(peer);
              }
              trigger(address.topic(), SyncTrigger.MESSAGE);
            }
          });
          break;
        }
      });
    }
  }

  private static <T> T await(final CompletableFuture<T> future, final long deadline)
      throws Exception {
    try {
      return future.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (final ExecutionException e) {
      final Throwable cause = e.getCause();
      if (cause instanceof Exception ex) {
        throw ex;
      }
      throw e;
    }
  }

  // ------------------------------------------------------------------ blocks and media

  /** Hooks the replica's joins once: pin what was verified, start media pins at once. */
  private void wire(final OrbitDbReplica replica) {
    if (!wired.add(replica.address())) {
      return;
    }
    final Inbox inbox = inboxes.computeIfAbsent(replica.address(), a -> new Inbox());
    replica.addListener(result -> onEntries(replica, result.added(), inbox));
  }

  /** Runs on the executor after a join: pins entries and identities, queues media. */
  private void onEntries(final OrbitDbReplica replica, final Collection<Entry> entries,
      final Inbox inbox) {
    final Set<Cid> identities = new LinkedHashSet<>();
    final Set<Cid> media = new LinkedHashSet<>();
    for (final Entry entry : entries) {
      bitswap.blockAdded(entry.cid());
      pinQuietly(entry.cid());
      identities.add(entry.identity());
      final MediaCidExtractor.Result found = extractor.extract(entry.payload());
      if (found.invalid() > 0) {
        counters.computeIfAbsent("media-invalid-cids", k -> new LongAdder())
            .add(found.invalid());
      }
      media.addAll(found.cids());
    }
    for (final Cid identity : identities) {
      if (blockstore.has(identity)) {
        bitswap.blockAdded(identity);
        pinQuietly(identity);
      }
    }
    // Media counts as pinned only once the entries naming it have their whole history here.
    final List<Cid> nowEligible = new ArrayList<>();
    synchronized (inbox.mediaLock) {
      for (final Entry entry : entries) {
        final Set<Cid> named = extractor.extract(entry.payload()).cids();
        if (!named.isEmpty()) {
          inbox.awaiting.computeIfAbsent(entry.cid(), k -> new LinkedHashSet<>()).addAll(named);
        }
      }
      for (final var it = inbox.awaiting.entrySet().iterator(); it.hasNext();) {
        final Map.Entry<Cid, Set<Cid>> waiting = it.next();
        if (closed(replica, inbox, waiting.getKey())) {
          nowEligible.addAll(waiting.getValue());
          it.remove();
        }
      }
      if (inbox.awaiting.size() > MAX_AWAITING) {
        count("media-awaiting-dropped");
        inbox.awaiting.remove(inbox.awaiting.keySet().iterator().next());
      }
    }
    eligibleMedia.addAll(nowEligible);
    for (final Cid cid : nowEligible) {
      if (pinnedMedia.contains(cid)) {
        report(cid);
      }
    }
    for (final Cid cid : media) {
      count("media-queued");
      pinQueue.pin(cid).whenComplete((done, error) -> {
        if (error == null) {
          pinnedMedia.add(cid);
          if (!incompletePins.isEmpty()) {
            executor.execute(this::retryIncompletePins);
          }
          if (eligibleMedia.contains(cid)) {
            report(cid);
          }
        }
      });
    }
  }

  /**
   * Whether every entry reachable from {@code start} through {@code next} and {@code refs} is a
   * verified, stored entry of the log; caller holds the inbox's media lock. Memoised.
   */
  private boolean closed(final OrbitDbReplica replica, final Inbox inbox, final Cid start) {
    final Deque<Cid> stack = new ArrayDeque<>();
    final Set<Cid> visited = new java.util.HashSet<>();
    stack.push(start);
    while (!stack.isEmpty()) {
      final Cid cid = stack.pop();
      if (inbox.closed.contains(cid) || !visited.add(cid)) {
        continue;
      }
      if (!replica.log().contains(cid)) {
        return false;
      }
      final Optional<byte[]> block = blockstore.get(cid);
      if (block.isEmpty()) {
        return false;
      }
      final Entry entry = Entry.decode(cid, block.get());
      entry.next().forEach(stack::push);
      entry.refs().forEach(stack::push);
    }
    inbox.closed.addAll(visited);
    return true;
  }

  /** Pins entries whose linked media was missing before (on the executor). */
  private void retryIncompletePins() {
    for (final Cid cid : List.copyOf(incompletePins)) {
      try {
        if (pins.pin(cid) instanceof PinResult.Pinned) {
          incompletePins.remove(cid);
        }
      } catch (final RuntimeException e) {
        incompletePins.remove(cid);
        count("pins-failed");
      }
    }
  }

  private void report(final Cid cid) {
    final SyncEngine current = engine;
    if (current != null && reportedMedia.add(cid)) {
      current.mediaPinned(cid.toString());
    }
  }

  /** Manifest and access-controller blocks (and those of the controller's database). */
  private void pinDatabaseBlocks(final OrbitDbReplica replica) {
    pinQuietly(replica.address().manifest());
    final AccessControllerRef ref = replica.manifest().accessController();
    if (ref.type().equals(AccessControllerRef.IPFS)) {
      pinQuietly(ref.ipfsManifest());
    }
    replica.accessControllerDatabase().ifPresent(this::pinDatabaseBlocks);
  }

  private void pinQuietly(final Cid cid) {
    try {
      if (pins.isPinned(cid)) {
        return;
      }
      final PinResult result = pins.pin(cid);
      if (result instanceof PinResult.Incomplete) {
        // An entry whose payload links media (tag 42) not here yet; the block itself is stored,
        // and the pin is tried again when a media pin finishes.
        count("pins-incomplete");
        if (incompletePins.size() < MAX_AWAITING) {
          incompletePins.add(cid);
        }
      }
    } catch (final RuntimeException e) {
      count("pins-failed");
      LOG.debug("pinning {} failed: {}", cid.toString(Multibase.Base.BASE58BTC), e.toString());
    }
  }

  private void count(final String name) {
    counters.computeIfAbsent(name, k -> new LongAdder()).increment();
  }

  /** Counters of the service, the heads protocol ({@code heads.*}) and the replicas. */
  public Map<String, Long> counters() {
    final Map<String, Long> out = new TreeMap<>();
    counters.forEach((k, v) -> out.put(k, v.sum()));
    headsProtocol.counters().forEach((k, v) -> out.put("heads." + k, v));
    replicas.counters().forEach((k, v) -> out.put("replicas." + k, v));
    final Map<String, Long> rejected = new LinkedHashMap<>();
    for (final OrbitDbReplica replica : replicas.replicas()) {
      replica.log().counters().forEach((k, v) -> {
        if (k.startsWith("rejected.") || k.equals("unavailable")) {
          rejected.merge("log." + k, v, Long::sum);
        }
      });
    }
    out.putAll(rejected);
    return out;
  }

  public OrbitDbReplicas replicas() {
    return replicas;
  }

  public MediaPinQueue pinQueue() {
    return pinQueue;
  }

  @Override
  public void close() {
    closed = true;
  }
}
