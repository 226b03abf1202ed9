package io.relaypinner.relay.replication;

import io.relaypinner.ipfs.bitswap.Bitswap;
import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.ipfs.pin.PinStore;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.pubsub.PubSub;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.PeerId;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.orbitdb.OrbitDbReplica;
import io.relaypinner.orbitdb.OrbitDbReplicas;
import io.relaypinner.orbitdb.heads.HeadsConfig;
import io.relaypinner.orbitdb.heads.HeadsEndpoint;
import io.relaypinner.orbitdb.heads.HeadsExchangeProtocol;
import io.relaypinner.relay.pubsub.OrbitDbTopics;
import io.relaypinner.relay.sync.SyncContext;
import io.relaypinner.relay.sync.SyncEngine;
import io.relaypinner.relay.sync.SyncResult;
import io.relaypinner.relay.sync.SyncTrigger;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
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
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The relay's OrbitDB replication (notes/orbitdb-wire.md §1, 3.25–3.28), as one path:
 *
 * <ol>
 *   <li><b>Intake.</b> {@link OrbitDbTopics}, the one pubsub listener, tells this service that a
 *       database is followed ({@link #onFollow}), that a message arrived on its topic
 *       ({@link #onMessage}: the data is an entry block) or that a peer subscribed
 *       ({@link #onPeerSubscribed}); the heads exchange ({@code /orbitdb/heads/<address>}, both
 *       directions) hands heads in too. Each goes into the database's {@link DatabaseSession}
 *       (bounded inbox) and queues a sync on the {@link SyncEngine}.
 *   <li><b>Sync.</b> The engine runs {@link #sync}: open the replica (manifest and controller
 *       over bitswap), then {@link DatabaseSync} joins the inbox into the verified
 *       {@link io.relaypinner.orbitdb.log.OrbitDbLog} until the log is complete.
 *   <li><b>Blocks and media.</b> After every join, {@link MediaPath} pins the new entries and
 *       their identities ({@link ReplicatedBlocks}), pins the media they name
 *       ({@link MediaPinQueue}) and reports a media CID to the engine once it is pinned and an
 *       entry naming it is complete in that database ({@link MediaLedger}).
 * </ol>
 *
 * <p>Heads are answered from the replica at any time, also for readers arriving after the writer
 * left. Thread-safe; callbacks from event loops only queue work.
 */
public final class ReplicationService implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ReplicationService.class);

  /** Databases with a session at most (followed databases and their controllers' databases). */
  public static final int MAX_SESSIONS = 2 * OrbitDbTopics.MAX_TOPICS;
  /** How long a heads exchange waits for its database's replica to open. */
  static final Duration HEADS_OPEN_TIMEOUT = Duration.ofSeconds(5);

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
  private final OrbitDbReplicas replicas;
  private final HeadsExchangeProtocol headsProtocol;
  private final MediaPinQueue pinQueue;
  private final ReplicatedBlocks blocks;
  private final MediaPath media;
  private final DatabaseSync databaseSync;
  private final InboxBudget inboxBudget;
  private final Executor executor;
  private final Clock clock;
  private final Duration dialTimeout;
  private final Map<OrbitDbAddress, DatabaseSession> sessions = new ConcurrentHashMap<>();
  private final Set<OrbitDbAddress> wired = ConcurrentHashMap.newKeySet();
  private final Map<String, LongAdder> counters = new ConcurrentHashMap<>();
  private volatile SyncEngine engine;
  private volatile Consumer<String> explicitFollow = topic -> { };
  private volatile boolean closed;

  /**
   * @param executor runs joins, verification, pins and storage (bounded; never an event loop)
   */
  public ReplicationService(final Host host, final PubSub pubsub, final Bitswap bitswap,
      final Blockstore blockstore, final PinStore pins, final OrbitDbReplicas replicas,
      final MediaCidExtractor extractor, final MediaPinQueue pinQueue, final Executor executor,
      final HeadsConfig headsConfig, final Config config, final InboxBudget inboxBudget,
      final Clock clock) {
    this.host = Objects.requireNonNull(host, "host");
    this.pubsub = Objects.requireNonNull(pubsub, "pubsub");
    this.bitswap = Objects.requireNonNull(bitswap, "bitswap");
    this.blockstore = Objects.requireNonNull(blockstore, "blockstore");
    this.replicas = Objects.requireNonNull(replicas, "replicas");
    this.pinQueue = Objects.requireNonNull(pinQueue, "pinQueue");
    this.executor = Objects.requireNonNull(executor, "executor");
    this.inboxBudget = Objects.requireNonNull(inboxBudget, "inboxBudget");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.dialTimeout = config.dialTimeout();
    this.headsProtocol = new HeadsExchangeProtocol(headsConfig, this::endpoint);
    this.blocks = new ReplicatedBlocks(bitswap, blockstore, pins, this::count);
    this.media = new MediaPath(extractor, pinQueue, blocks, this::reportPinned, this::count);
    this.databaseSync = new DatabaseSync(host, pubsub, headsProtocol, this::endpoint, media,
        clock, new DatabaseSync.Config(config.updateWindow(), config.quietPeriod(),
            config.dialTimeout(), DatabaseSync.Config.DEFAULT.resumeEvery(),
            DatabaseSync.Config.DEFAULT.giveUpFactor()), this::count);
  }

  /** Starts answering the heads protocol; syncs are queued on {@code syncEngine}. */
  public void start(final SyncEngine syncEngine) {
    this.engine = Objects.requireNonNull(syncEngine, "syncEngine");
    syncEngine.onExplicitRequest(this::onExplicitRequest);
    headsProtocol.register(host.protocols());
  }

  /**
   * Called with the topic of a database that a successful explicit sync reached while it was not
   * followed: the topic policy follows it, as if a peer had subscribed.
   */
  public void onExplicitSyncOfUnfollowed(final Consumer<String> listener) {
    this.explicitFollow = Objects.requireNonNull(listener, "listener");
  }

  // ------------------------------------------------------------------ intake

  /** What {@link OrbitDbTopics} tells replication: follows, messages, subscribers. */
  public OrbitDbTopics.Listener topicListener() {
    return new OrbitDbTopics.Listener() {
      @Override
      public void onFollow(final String topic) {
        ReplicationService.this.onFollow(topic);
      }

      @Override
      public void onUnfollow(final String topic) {
        ReplicationService.this.onUnfollow(topic);
      }

      @Override
      public void onMessage(final String topic, final byte[] data, final PeerId from) {
        ReplicationService.this.onMessage(topic, data, from);
      }

      @Override
      public void onPeerSubscribed(final String topic, final PeerId peer) {
        ReplicationService.this.onPeerSubscribed(topic, peer);
      }
    };
  }

  /**
   * Admission of a topic: its database opens (manifest and access controller fetched from
   * connected peers and checked); a database with at least one verified entry counts as used.
   */
  public OrbitDbTopics.Admission admission() {
    return new OrbitDbTopics.Admission() {
      @Override
      public CompletableFuture<Boolean> admit(final String topic) {
        if (!OrbitDbAddress.isValid(topic)) {
          return CompletableFuture.completedFuture(false);
        }
        return replicas.follow(OrbitDbAddress.parse(topic)).thenApply(replica -> true);
      }

      @Override
      public boolean hasEntries(final String topic) {
        return OrbitDbAddress.isValid(topic) && replicas.replica(OrbitDbAddress.parse(topic))
            .map(replica -> replica.log().size() > 0).orElse(false);
      }
    };
  }

  /** The relay follows {@code topic} now (admitted, or a restart): sync it. */
  public void onFollow(final String topic) {
    if (!OrbitDbAddress.isValid(topic)) {
      return;
    }
    if (session(OrbitDbAddress.parse(topic), true).isPresent()) {
      trigger(topic, SyncTrigger.FOLLOW);
    }
  }

  /** The relay stopped following {@code topic}: its session and inbox go. */
  public void onUnfollow(final String topic) {
    if (!OrbitDbAddress.isValid(topic)) {
      return;
    }
    final OrbitDbAddress address = OrbitDbAddress.parse(topic);
    final DatabaseSession session = sessions.remove(address);
    if (session != null) {
      session.close();
    }
    replicas.unfollow(address);
    wired.remove(address);
  }

  /** A message on a followed topic (on a pubsub event loop): its data is an entry block. */
  public void onMessage(final String topic, final byte[] data, final PeerId from) {
    final Optional<DatabaseSession> session = known(topic);
    if (session.isEmpty()) {
      return;
    }
    if (offer(session.get(), data, "heads-pubsub")) {
      trigger(topic, SyncTrigger.MESSAGE);
    }
  }

  /**
   * A peer subscribed to a followed topic (on a pubsub event loop): exchange heads with it. When
   * the replica is open the exchange starts now, outside the sync engine: a fresh reader has no
   * heads to send and waits for ours, so it must not wait for a sync of this database that runs
   * (until its update window ends) or for a free sync slot. The heads it sends go to the inbox
   * and queue a sync like any others. Otherwise (no replica or connection yet, the exchange
   * failed, or an {@code orbitdb} controller's database, exchanged by the sync) the next sync
   * dials it.
   */
  public void onPeerSubscribed(final String topic, final PeerId peer) {
    final Optional<DatabaseSession> session = known(topic);
    if (session.isEmpty()) {
      return;
    }
    final Optional<OrbitDbReplica> replica = replicas.replica(session.get().address());
    final Optional<io.relaypinner.libp2p.host.Connection> connection = host.connection(peer);
    if (replica.isPresent() && connection.isPresent() && !closed) {
      count("exchanges-on-subscribe");
      headsProtocol.exchange(connection.get(), session.get().address(), endpoint(session.get()))
          .orTimeout(dialTimeout.toMillis(), TimeUnit.MILLISECONDS)
          .whenComplete((result, error) -> {
            count(error == null ? "exchanges-dialled" : "exchanges-failed");
            if (error != null) {
              // The next sync dials it again.
              session.get().sawPeer(peer, true);
              trigger(topic, SyncTrigger.MESSAGE);
            }
          });
      if (replica.get().accessControllerDatabase().isEmpty()) {
        session.get().sawPeer(peer, false);
        return;
      }
    }
    session.get().sawPeer(peer, true);
    trigger(topic, SyncTrigger.MESSAGE);
  }

  private boolean offer(final DatabaseSession session, final byte[] block, final String source) {
    final DatabaseSession.Offer offer = session.offer(block);
    switch (offer) {
      case QUEUED -> count(source);
      case QUEUED_DROPPING_OLDEST -> {
        count(source);
        count("heads-dropped.database-full");
      }
      case DROPPED_OVERSIZED -> count("heads-dropped.oversized");
      case DROPPED_FULL -> count("heads-dropped.total-full");
      default -> throw new IllegalStateException(offer.name());
    }
    return offer == DatabaseSession.Offer.QUEUED
        || offer == DatabaseSession.Offer.QUEUED_DROPPING_OLDEST;
  }

  private Optional<DatabaseSession> known(final String topic) {
    if (!OrbitDbAddress.isValid(topic)) {
      return Optional.empty();
    }
    return Optional.ofNullable(sessions.get(OrbitDbAddress.parse(topic)));
  }

  private Optional<DatabaseSession> session(final OrbitDbAddress address,
      final boolean create) {
    final DatabaseSession existing = sessions.get(address);
    if (existing != null || !create) {
      return Optional.ofNullable(existing);
    }
    if (sessions.size() >= MAX_SESSIONS) {
      count("sessions-refused");
      return Optional.empty();
    }
    return Optional.of(sessions.computeIfAbsent(address,
        a -> new DatabaseSession(a, inboxBudget)));
  }

  private void trigger(final String topic, final SyncTrigger trigger) {
    final SyncEngine current = engine;
    if (current != null && !closed) {
      current.enqueue(topic, trigger);
    }
  }

  /** The heads-exchange side of a database with a session. */
  private Optional<HeadsEndpoint> endpoint(final OrbitDbAddress address) {
    return Optional.ofNullable(sessions.get(address)).map(this::endpoint);
  }

  private HeadsEndpoint endpoint(final DatabaseSession session) {
    final OrbitDbAddress address = session.address();
    return new HeadsEndpoint() {
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
        session.sawPeer(from, false);
        if (offer(session, block, "heads-exchange")) {
          trigger(address.topic(), SyncTrigger.MESSAGE);
        }
      }
    };
  }

  // ------------------------------------------------------------------ sync

  /**
   * One sync of a database (run by the engine): opens the replica, then {@link DatabaseSync}
   * runs until the log is complete. A database that was not followed (an explicit sync of an
   * address no peer subscribed to) gets a session only once its replica opens, and is followed
   * once the sync succeeds.
   */
  public SyncResult sync(final SyncContext context) throws Exception {
    final long start = clock.millis();
    final OrbitDbAddress address = OrbitDbAddress.parse(context.address());
    final boolean followed = sessions.containsKey(address);
    LOG.debug("sync of {} ({}): opening", address, context.trigger());
    final OrbitDbReplica replica = open(address, context);
    final DatabaseSession session = session(address, true).orElseThrow(() ->
        new IllegalStateException("not syncing " + address + ": " + MAX_SESSIONS
            + " databases have sessions already"));
    final DatabaseSession acSession = replica.accessControllerDatabase()
        .flatMap(acDb -> session(acDb.address(), true)).orElse(null);
    wire(replica, session);
    replica.accessControllerDatabase().ifPresent(acDb -> {
      if (acSession != null) {
        wire(acDb, acSession);
      }
    });
    context.countOperation();
    try {
      executor.execute(() -> blocks.databaseOpened(replica));
    } catch (final RejectedExecutionException e) {
      count("executor-rejected");
    }
    final SyncResult result;
    try {
      result = databaseSync.run(context, session, replica, acSession, start);
    } catch (final Exception e) {
      if (!followed && context.trigger() == SyncTrigger.HTTP) {
        // An explicit sync of an unfollowed database that did not succeed leaves nothing.
        onUnfollow(address.topic());
      }
      throw e;
    }
    if (!followed) {
      explicitFollow.accept(address.topic());
    }
    return result;
  }

  private OrbitDbReplica open(final OrbitDbAddress address, final SyncContext context)
      throws Exception {
    if (replicas.replica(address).isEmpty() && !blockstore.has(address.manifest())
        && bitswap.peerCount() == 0) {
      throw new IllegalStateException("cannot open " + address
          + ": its manifest is not stored here and no peer is connected to fetch it from");
    }
    try {
      return replicas.follow(address).get(context.timeout().toMillis(), TimeUnit.MILLISECONDS);
    } catch (final ExecutionException e) {
      final Throwable cause = e.getCause();
      if (cause instanceof Exception ex) {
        throw ex;
      }
      throw e;
    }
  }

  /** Hooks the replica's joins once into the media path. */
  private void wire(final OrbitDbReplica replica, final DatabaseSession session) {
    if (wired.add(replica.address())) {
      replica.addListener(result -> media.onJoin(session, replica, result));
    }
  }

  /** The one "pinned" route: media pinned and eligible in {@code session}'s database. */
  private void reportPinned(final DatabaseSession session, final Cid cid) {
    final SyncEngine current = engine;
    if (current != null) {
      count("media-reported");
      current.mediaPinned(cid.toString());
    }
  }

  /**
   * An explicit sync was asked for (also one that coalesces onto a sync already queued or
   * running): re-dial the peers seen on the topic that are not connected now (spec 3.5).
   */
  private void onExplicitRequest(final String address) {
    if (!OrbitDbAddress.isValid(address)) {
      return;
    }
    final DatabaseSession session = sessions.get(OrbitDbAddress.parse(address));
    if (session == null) {
      return;
    }
    for (final PeerId peer : session.seenPeers()) {
      if (host.connection(peer).isPresent()) {
        continue;
      }
      host.peerStore().get(peer).ifPresent(info -> {
        for (final Multiaddr addr : info.addresses()) {
          count("reconnects");
          host.dial(addr.withoutPeerId().withPeerId(peer)).whenComplete((c, error) -> {
            if (error == null) {
              session.sawPeer(peer, true);
              trigger(address, SyncTrigger.MESSAGE);
            }
          });
          break;
        }
      });
    }
  }

  // ------------------------------------------------------------------ diagnostics

  private void count(final String name) {
    counters.computeIfAbsent(name, k -> new LongAdder()).increment();
  }

  /** Counters of the service, the heads protocol ({@code heads.*}) and the replicas. */
  public Map<String, Long> counters() {
    final Map<String, Long> out = new TreeMap<>();
    counters.forEach((k, v) -> out.put(k, v.sum()));
    headsProtocol.counters().forEach((k, v) -> out.put("heads." + k, v));
    replicas.counters().forEach((k, v) -> out.put("replicas." + k, v));
    final Map<String, Long> logs = new LinkedHashMap<>();
    for (final OrbitDbReplica replica : replicas.replicas()) {
      replica.log().counters().forEach((k, v) -> {
        if (k.startsWith("rejected.") || k.startsWith("bound.") || k.equals("unavailable")
            || k.equals("oversized") || k.equals("deferred") || k.equals("accepted")) {
          logs.merge("log." + k, v, Long::sum);
        }
      });
    }
    out.putAll(logs);
    return out;
  }

  /** Bytes of heads waiting in all inboxes. */
  public long inboxBytes() {
    return inboxBudget.usedBytes();
  }

  /** Databases with a session. */
  public int sessionCount() {
    return sessions.size();
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
