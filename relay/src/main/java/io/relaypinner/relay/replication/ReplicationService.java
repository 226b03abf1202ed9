package io.relaypinner.relay.replication;

import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.ipfs.pin.PinStore;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.orbitdb.OrbitDbReplicas;
import io.relaypinner.orbitdb.log.OrbitDbLog;
import io.relaypinner.relay.coordination.Coordination;
import io.relaypinner.relay.pubsub.OrbitDbTopics;
import io.relaypinner.relay.sync.DatabaseSyncer;
import io.relaypinner.relay.sync.SyncEngine;
import io.relaypinner.relay.sync.SyncTrigger;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * The relay's OrbitDB replication (notes/orbitdb-wire.md §1, 3.25–3.28), assembled from pieces
 * with one job each. A pubsub message travels through them in this order:
 *
 * <ol>
 *   <li>{@link OrbitDbTopics} (the one pubsub listener; admission, operator policy, probation)
 *       hands a message on a followed topic to {@link ReplicationIntake}, which puts it in the
 *       database's {@link DatabaseSession} inbox (bounded: {@link InboxBudget}) and queues a sync
 *       on the {@link SyncEngine}. Heads from heads exchanges take the same way.
 *   <li>The engine runs {@link ReplicationSyncer}: policy, open the replica, sessions, then
 *       {@link DatabaseSync} joins the inbox into the verified {@link OrbitDbLog} until the log
 *       is complete (or answers 504 and gives up later).
 *   <li>Each join of the replica goes to {@link MediaPath}: {@link ReplicatedBlocks} pins the new
 *       entries and identities, {@link MediaPinQueue} fetches and pins the media they name, the
 *       session's {@link MediaLedger} releases a media CID once an entry naming it is complete,
 *       and the pinned, eligible CID is reported to the engine ({@link SyncEngine#mediaPinned},
 *       the one "pinned" route).
 * </ol>
 *
 * <p>Entries that reached the relay other than as a message on their topic (a heads exchange),
 * or while a peer was subscribing, are published on the topic again by the
 * {@link HeadsRepublisher} (bounded per database and node), so that readers connected to the
 * relay alone get them without asking again (orbitdb#1255).
 *
 * <p>Relays sharing their stores ({@link #coordinate}) add {@link ReplicationCoordinator}: the
 * syncer runs full syncs only of the databases this relay owns, a follower sync of the others;
 * heads changes are announced and heard.
 *
 * <p>The network is behind {@link ReplicationNetwork}; times come from the injected
 * {@link Clock}. Thread-safe; callbacks from event loops only queue work.
 */
public final class ReplicationService implements AutoCloseable {
  /** Limits of the service. */
  public record Config(Duration updateWindow, Duration quietPeriod, Duration dialTimeout,
      int pinConcurrency) {
    /** Wait up to 5 s for an update, 300 ms of quiet ends the wait, 10 s per dial, 4 pins. */
    public static final Config DEFAULT = new Config(Duration.ofSeconds(5),
        Duration.ofMillis(300), Duration.ofSeconds(10), 4);
  }

  private final ReplicationNetwork network;
  private final OrbitDbReplicas replicas;
  private final MediaPinQueue pinQueue;
  private final InboxBudget inboxBudget;
  private final DatabaseSessions sessions;
  private final ReplicationIntake intake;
  private final ReplicatedBlocks blocks;
  private final ReplicationSyncer syncer;
  private final ReplicationCoordinator coordinator;
  private final HeadsRepublisher republisher;
  private final Function<String, CompletableFuture<Boolean>> follow;
  private final Clock clock;
  private final Map<String, LongAdder> counters = new ConcurrentHashMap<>();
  private volatile SyncEngine engine;

  /**
   * @param executor runs joins, verification, pins and storage (bounded; never an event loop)
   * @param permitted the operator's policy ({@code RELAY_ORBITDB_ALLOW} / {@code _DENY})
   * @param follow follows a database an explicit sync reached; completes false when refused
   * @param timer wakes a sync at its next deadline on {@code clock} (the sync engine's), and
   *     gives a deferred re-publication of heads its turn
   */
  public ReplicationService(final ReplicationNetwork network, final Blockstore blockstore,
      final PinStore pins, final OrbitDbReplicas replicas, final MediaCidExtractor extractor,
      final MediaPinQueue pinQueue, final Executor executor, final Config config,
      final InboxBudget inboxBudget, final Predicate<String> permitted,
      final Function<String, CompletableFuture<Boolean>> follow, final Clock clock,
      final SyncEngine.Timer timer) {
    this.network = Objects.requireNonNull(network, "network");
    this.replicas = Objects.requireNonNull(replicas, "replicas");
    this.pinQueue = Objects.requireNonNull(pinQueue, "pinQueue");
    this.inboxBudget = Objects.requireNonNull(inboxBudget, "inboxBudget");
    this.follow = Objects.requireNonNull(follow, "follow");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.sessions = new DatabaseSessions(inboxBudget);
    this.blocks = new ReplicatedBlocks(network::announce, blockstore, pins, this::count);
    final MediaPath media = new MediaPath(extractor, pinQueue, blocks, this::reportPinned,
        this::count);
    this.coordinator = new ReplicationCoordinator(replicas, executor, clock, this::count,
        media::onJoin);
    this.republisher = new HeadsRepublisher(network::publish,
        address -> replicas.replica(address).map(replica -> replica.log().headBlocks()),
        executor, clock, timer, this::count);
    this.intake = new ReplicationIntake(sessions, replicas, network, executor, coordinator,
        republisher, this::count, config.dialTimeout());
    final DatabaseSync databaseSync = new DatabaseSync(network, intake::endpoint, media, clock,
        timer, new DatabaseSync.Config(config.updateWindow(), config.quietPeriod(),
            config.dialTimeout(), DatabaseSync.Config.DEFAULT.resumeEvery(),
            DatabaseSync.Config.DEFAULT.giveUpFactor()), this::count);
    this.syncer = new ReplicationSyncer(replicas, sessions, network, databaseSync, media,
        coordinator, republisher, permitted, follow, clock, this::count);
  }

  /**
   * Coordinates with the other relays on shared stores (issue 24; call before {@link #start}):
   * full syncs only of the databases this relay owns, heads changes announced and heard. The
   * default is {@link Coordination#local()} (alone: owns everything).
   */
  public void coordinate(final Coordination coordination) {
    if (engine != null) {
      throw new IllegalStateException("coordinate before start");
    }
    coordinator.use(coordination);
  }

  /** Queues syncs on {@code syncEngine} from now on and answers the heads protocol. */
  public void start(final SyncEngine syncEngine) {
    this.engine = Objects.requireNonNull(syncEngine, "syncEngine");
    intake.start(syncEngine);
    syncEngine.onExplicitRequest(intake::onExplicitRequest);
    coordinator.start(topic -> intake.trigger(topic, SyncTrigger.TAKEOVER),
        topic -> intake.trigger(topic, SyncTrigger.FOLLOW), follow::apply,
        address -> syncEngine.history().record(address, clock.instant()));
    network.serveHeads(intake::endpoint);
  }

  /** What the sync engine runs for each sync. */
  public DatabaseSyncer syncer() {
    return syncer;
  }

  /** What {@link OrbitDbTopics} tells replication: follows, messages, subscribers. */
  public OrbitDbTopics.Listener topicListener() {
    return intake;
  }

  /**
   * Admission of a topic: its database opens (manifest and access controller fetched from
   * connected peers and checked); a database with a verified entry (open, or stored from an
   * earlier run) counts as used.
   */
  public OrbitDbTopics.Admission admission() {
    return new OrbitDbTopics.Admission() {
      @Override
      public CompletableFuture<Boolean> admit(final String topic) {
        return OrbitDbAddress.tryParse(topic)
            .map(address -> replicas.follow(address).thenApply(replica -> true))
            .orElseGet(() -> CompletableFuture.completedFuture(false));
      }

      @Override
      public boolean hasEntries(final String topic) {
        return OrbitDbAddress.tryParse(topic).map(address -> replicas.replica(address)
            .map(replica -> replica.log().size() > 0)
            .orElseGet(() -> OrbitDbLog.hasStoredEntries(replicas.context().datastore(),
                address))).orElse(false);
      }
    };
  }

  /** The one "pinned" route: media pinned and eligible in {@code session}'s database. */
  private void reportPinned(final DatabaseSession session, final Cid cid) {
    final SyncEngine current = engine;
    if (current != null) {
      count("media-reported");
      current.mediaPinned(cid.toString());
    }
  }

  private void count(final String name) {
    counters.computeIfAbsent(name, k -> new LongAdder()).increment();
  }

  /**
   * Counters of the service ({@code bound.*} when a bound was hit), the heads protocol
   * ({@code heads.*}), the replicas ({@code replicas.*}) and the logs ({@code log.*}).
   */
  public Map<String, Long> counters() {
    final Map<String, Long> out = new TreeMap<>();
    counters.forEach((k, v) -> out.put(k, v.sum()));
    final long queueFull = pinQueue.queueFullCount();
    if (queueFull > 0) {
      out.put("bound.media-queue", queueFull);
    }
    network.headsCounters().forEach((k, v) -> out.put("heads." + k, v));
    replicas.counters().forEach((k, v) -> out.put("replicas." + k, v));
    replicas.logCounters().forEach((k, v) -> {
      if (k.startsWith("rejected.") || k.startsWith("bound.") || k.equals("unavailable")
          || k.equals("oversized") || k.equals("deferred") || k.equals("truncated")
          || k.equals("accepted") || k.equals("history-walks")
          || k.equals("histories-completed")) {
        out.put("log." + k, v);
      }
    });
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

  /** Media CIDs the databases' ledgers remember together (awaiting, eligible, reported). */
  public long mediaLedgerCids() {
    return sessions.mediaCids();
  }

  /** Entries waiting for their media before their pin. */
  public int entriesWaitingForMedia() {
    return blocks.waitingCount();
  }

  public OrbitDbReplicas replicas() {
    return replicas;
  }

  public MediaPinQueue pinQueue() {
    return pinQueue;
  }

  @Override
  public void close() {
    intake.close();
  }
}
