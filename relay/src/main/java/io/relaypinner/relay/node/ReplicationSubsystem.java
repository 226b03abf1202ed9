package io.relaypinner.relay.node;

import io.netty.util.concurrent.DefaultThreadFactory;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.common.Shutdown;
import io.relaypinner.common.budget.Resource;
import io.relaypinner.common.budget.Scope;
import io.relaypinner.ipfs.bitswap.Bitswap;
import io.relaypinner.ipfs.bitswap.NetworkPinner;
import io.relaypinner.ipfs.datastore.Fence;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.orbitdb.BlockFetcher;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.orbitdb.OrbitDbReplica;
import io.relaypinner.orbitdb.OrbitDbReplicas;
import io.relaypinner.orbitdb.ReplicaContext;
import io.relaypinner.orbitdb.identity.Identities;
import io.relaypinner.orbitdb.identity.IdentityVerifiers;
import io.relaypinner.orbitdb.log.LogConfig;
import io.relaypinner.orbitdb.log.LogFences;
import io.relaypinner.orbitdb.log.LogMemory;
import io.relaypinner.orbitdb.log.OrbitDbLog;
import io.relaypinner.relay.api.EntryLookup;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.coordination.DatabaseOwnership;
import io.relaypinner.relay.identity.IdentityVerificationMetrics;
import io.relaypinner.relay.pubsub.OrbitDbTopics;
import io.relaypinner.relay.pubsub.PubSubMetrics;
import io.relaypinner.relay.replication.Libp2pReplicationNetwork;
import io.relaypinner.relay.replication.MediaCidExtractor;
import io.relaypinner.relay.replication.MediaPinQueue;
import io.relaypinner.relay.replication.ReplicationMetrics;
import io.relaypinner.relay.replication.ReplicationService;
import io.relaypinner.relay.sync.SyncEngine;
import io.relaypinner.relay.sync.SyncHistory;
import io.relaypinner.stores.PostgresDatastore;
import java.time.Clock;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * OrbitDB replication: the sync engine (spec 3.5) and its history, the topic policy (follow every
 * database topic peers subscribe to, resubscribing the ones followed before a restart), replicas
 * of the followed databases (blocks over bitswap, verified before they are stored), the heads
 * exchange, media pins; every trigger (follow, topic message, heads, a peer subscribing) queues a
 * sync on the engine. Joins, verification and entry pins run on its own executor.
 */
public final class ReplicationSubsystem extends Subsystem {
  private static final Logger LOG = LoggerFactory.getLogger(ReplicationSubsystem.class);

  private final NodeTuning tuning;
  private final IdentityVerifiers identityVerifiers;
  private final MediaCidExtractor mediaExtractor;
  private final SyncEngine syncEngine;
  private final OrbitDbTopics topics;
  /**
   * Heap one verified identity keeps in the cache: the identity, its two secp256k1 keys with
   * the curve library's precomputed tables (about 2.5 KiB each, measured in the soak's heap
   * histograms) and the cache's entry.
   */
  static final long IDENTITY_BYTES = 6 * 1024;
  private final int identityCacheSize;
  private final ThreadPoolExecutor executor;
  private final ReplicationService service;

  /**
   * Starts replication on the network and content subsystems, then the topic policy (which
   * resubscribes persisted topics).
   *
   * @param peerId this relay's peer id (its own log state on shared stores)
   * @param budget the node's budget: followed databases and the identity cache hold its
   *     replication memory
   */
  public ReplicationSubsystem(final RelayConfig config, final String peerId,
      final StorageSubsystem storage, final NetworkSubsystem network,
      final ContentSubsystem content, final PrometheusRegistry registry, final Clock clock,
      final NodeTuning tuning, final NodeBudget budget) {
    Objects.requireNonNull(config, "config");
    Objects.requireNonNull(peerId, "peerId");
    Objects.requireNonNull(storage, "storage");
    Objects.requireNonNull(network, "network");
    Objects.requireNonNull(content, "content");
    Objects.requireNonNull(registry, "registry");
    Objects.requireNonNull(clock, "clock");
    this.tuning = Objects.requireNonNull(tuning, "tuning");
    final Scope memory = budget.memory(NodeBudget.Surface.REPLICATION);
    identityCacheSize = identityCacheSize(tuning.identityCacheSize(), memory);
    // Held for the node's life: what a full cache keeps (followed databases get the rest).
    memory.force(Resource.MEMORY, identityCacheSize * IDENTITY_BYTES);
    // The identity types this node accepts (passkeys per its configuration): one set for all.
    identityVerifiers = IdentityVerifiers.withPasskeys(config.passkeys().toWebAuthnConfig());
    mediaExtractor = new MediaCidExtractor(config.sync().mediaCidFields());
    final DatabaseOwnership ownership = storage.coordination().ownership();
    final SyncHistory history = new SyncHistory(storage.datastore(),
        tuning.syncHistoryMaxEntries(), ownership::fence);
    history.load();
    // Syncs run the replication service's syncer (a sync before it is there fails and is retried
    // by the next trigger).
    final ReplicationService[] attached = new ReplicationService[1];
    syncEngine = new SyncEngine(config.sync(), context -> {
      final ReplicationService current = attached[0];
      if (current == null) {
        throw new IllegalStateException("replication is not running yet");
      }
      return current.syncer().sync(context);
    }, history, registry, clock);
    topics = new OrbitDbTopics(network.pubsub(), storage.datastore(), storage.executor(),
        config.sync().topicPolicy(), tuning.topics(), clock, memory);
    // The one pubsub listener of replication: admitted topics, their messages and subscribers.
    PubSubMetrics.register(registry, network.pubsub(), topics);
    executor = new ThreadPoolExecutor(tuning.storageThreads(), tuning.storageThreads(), 0,
        TimeUnit.MILLISECONDS, new ArrayBlockingQueue<>(tuning.replicationQueue()),
        new DefaultThreadFactory("relay-replication", true),
        new ThreadPoolExecutor.AbortPolicy());
    try {
      service = startService(config, peerId, storage, network, content, registry, clock);
      attached[0] = service;
      // Only now: the persisted topics it resubscribes start syncs at once, and a sync that
      // ran before the service was attached failed into its 60 s cooldown (after every restart
      // a followed database then waited a minute for its first sync).
      topics.start(service.topicListener(), service.admission());
    } catch (final RuntimeException e) {
      syncEngine.close();
      executor.shutdownNow();
      throw e;
    }
  }

  /**
   * Entries of the identity cache: {@code configured}, or fewer so that a full cache holds at
   * most a quarter of the replication memory ({@link #IDENTITY_BYTES} each), at least 256.
   */
  static int identityCacheSize(final int configured, final Scope memory) {
    final long room = memory.limits().max(Resource.MEMORY) / 4 / IDENTITY_BYTES;
    return (int) Math.max(Math.min(256, configured), Math.min(configured, room));
  }

  /**
   * A followed database's shared heads are written by its owner alone, fenced by its lease; an
   * access controller's database (nobody leases it) by every relay that joins it.
   */
  static LogFences fences(final DatabaseOwnership ownership) {
    return new LogFences() {
      @Override
      public boolean leased(final OrbitDbAddress address) {
        return ownership.wants(address.toString());
      }

      @Override
      public Optional<Fence> fence(final OrbitDbAddress address) {
        return ownership.fence(address.toString());
      }
    };
  }

  private ReplicationService startService(final RelayConfig config, final String peerId,
      final StorageSubsystem storage, final NetworkSubsystem network,
      final ContentSubsystem content, final PrometheusRegistry registry, final Clock clock) {
    // Relays sharing the datastore each keep their own state of every log (what each verified,
    // its heads), and read each other's heads from the shared key.
    final LogConfig logConfig = storage.datastore() instanceof PostgresDatastore
        ? tuning.log().withStateScope(peerId) : tuning.log();
    final Bitswap bitswap = content.bitswap();
    // fetch, not get: a block reaches the store only after the log (or the identity cache)
    // verified it, so a refused entry is never stored or served.
    // With the quota reached, blocks not held are not fetched: the join keeps them on its
    // frontier and a later join takes them once GC made room (counted as refused).
    final BlockFetcher fetcher = storage.quota().guard(
        cid -> bitswap.fetch(cid, tuning.replicationFetchTimeout()), "replication");
    IdentityVerificationMetrics.register(registry, identityVerifiers);
    if (config.passkeys().origins().isEmpty()) {
      LOG.info("passkey identities: webauthn-varsig writers will be refused until"
          + " RELAY_WEBAUTHN_ORIGINS names the apps' origins");
    } else {
      LOG.info("passkey identities: relying parties {} (rpIds {})", config.passkeys().origins(),
          config.passkeys().toWebAuthnConfig().rpIds());
    }
    final ReplicaContext context = new ReplicaContext(storage.blockstore(), storage.datastore(),
        fetcher, new Identities(storage.blockstore(), fetcher, identityVerifiers, executor,
            identityCacheSize), executor, logConfig, clock, new LogMemory(),
        fences(storage.coordination().ownership()));
    // Media pins (the pinned-already check, each fetched block's links, the final pin) run on
    // the bitswap executor, next to the block writes they wait for: on the replication executor
    // they queued behind the joins of a writer's burst (1-2 s before the first media want).
    final NetworkPinner pinner = content.pinner();
    final MediaPinQueue pinQueue = new MediaPinQueue(
        (cid, holder) -> pinner.pin(cid, holder, tuning.networkPinner()),
        (cid, holder) -> storage.pins().holdIfPinned(cid, holder, false),
        content.executor(), tuning.replication().pinConcurrency());
    final ReplicationService started = new ReplicationService(
        new Libp2pReplicationNetwork(network.host(), network.pubsub(), bitswap, tuning.heads()),
        storage.blockstore(), storage.pins(), new OrbitDbReplicas(context), mediaExtractor,
        pinQueue, executor, tuning.replication(), tuning.newInboxBudget(), topics::permits,
        topics::followAdmitted, clock, syncEngine.timer());
    started.coordinate(storage.coordination());
    pinQueue.shareWith(storage.coordination().media());
    started.start(syncEngine);
    ReplicationMetrics.register(registry, started);
    // Syncs and media pins an outage failed run again as soon as the store answers.
    storage.whenStoresRecover(() -> {
      pinQueue.storeRecovered();
      syncEngine.storeRecovered();
    });
    return started;
  }

  /** The sync engine. */
  public SyncEngine syncEngine() {
    return syncEngine;
  }

  /** The OrbitDB topic policy. */
  public OrbitDbTopics topics() {
    return topics;
  }

  /**
   * {@code POST /pinning/has-entry}'s lookup: whether {@code entry} is verified into the relay's
   * log of {@code database} (in memory, or its marker in the datastore: one key, never a scan).
   * Unknown (null) for a database the relay does not follow, or whose replica is not open.
   */
  public EntryLookup.Result hasEntry(final OrbitDbAddress database, final Cid entry) {
    if (!topics.isFollowed(database.toString())) {
      return EntryLookup.Result.unknown(EntryLookup.SOURCE_NOT_FOLLOWED);
    }
    final Optional<OrbitDbReplica> replica = service.replicas().replica(database);
    if (replica.isEmpty()) {
      return EntryLookup.Result.unknown(EntryLookup.SOURCE_NOT_OPEN);
    }
    final OrbitDbLog log = replica.get().log();
    return new EntryLookup.Result(log.contains(entry), (long) log.size(),
        EntryLookup.SOURCE_LOG);
  }

  /** The replication service. */
  public ReplicationService service() {
    return service;
  }

  /** Joins, verification, entry pins (imports verify there too). */
  public ExecutorService executor() {
    return executor;
  }

  /** The identity types this node accepts. */
  public IdentityVerifiers identityVerifiers() {
    return identityVerifiers;
  }

  /** The media CIDs of an entry's payload ({@code RELAY_MEDIA_CID_FIELDS}). */
  public MediaCidExtractor mediaExtractor() {
    return mediaExtractor;
  }

  /**
   * Closes the sync engine (before the host and the stores: running syncs may use both until
   * they end), then the replication service.
   */
  @Override
  protected void onStop() {
    syncEngine.close();
    service.close();
  }

  /** After {@link #stop()}: the replication executor, interrupting what still runs. */
  @Override
  protected void onClose() {
    Shutdown.shutdownGracefully(executor, tuning.shutdownTimeout(), true,
        "replication executor");
  }
}
