package io.relaypinner.relay.node;

import io.relaypinner.ipfs.bitswap.BitswapConfig;
import io.relaypinner.ipfs.bitswap.NetworkPinner;
import io.relaypinner.ipfs.car.CarReader;
import io.relaypinner.libp2p.protocol.autonat.AutoNatConfig;
import io.relaypinner.libp2p.pubsub.GossipsubConfig;
import io.relaypinner.orbitdb.heads.HeadsConfig;
import io.relaypinner.orbitdb.identity.Identities;
import io.relaypinner.orbitdb.log.LogConfig;
import io.relaypinner.relay.coordination.PostgresCoordination;
import io.relaypinner.relay.gateway.CarPlanner;
import io.relaypinner.relay.pinsvc.PinningServiceEngine;
import io.relaypinner.relay.pubsub.OrbitDbTopics;
import io.relaypinner.relay.replication.InboxBudget;
import io.relaypinner.relay.replication.ReplicationService;
import io.relaypinner.relay.sync.SyncHistory;
import java.time.Duration;
import java.util.Objects;

/**
 * The node's built-in choices that no environment variable sets: thread and queue sizes, timeouts
 * and the protocol and engine configurations the subsystems are wired with. One record, so the
 * defaults are read in one place and a test can build a subsystem with smaller ones.
 *
 * @param storageThreads threads for blocking storage work (pin checks, block reads for /ipfs/);
 *     bitswap's and replication's executors have as many
 * @param storageQueue storage tasks waiting beyond those; more is answered 503 rather than
 *     queued without end (bitswap's queue is four times this)
 * @param replicationQueue tasks queued for the replication executor (joins fan out per entry)
 * @param replicationFetchTimeout how long replication (and an import) waits for one block over
 *     bitswap
 * @param datastoreFlush how soon deferred datastore writes (replicated entries' pins) are
 *     committed at the latest
 * @param shutdownTimeout how long {@code close()} waits for each executor and the event loops
 * @param bindTimeout how long a libp2p listener may take to bind
 * @param bitswap bitswap's limits
 * @param gossipsub gossipsub's parameters
 * @param heads the OrbitDB heads exchange's limits
 * @param log the OrbitDB log's limits (fetches wait {@code replicationFetchTimeout})
 * @param autoNat the AutoNAT v1 server's limits
 * @param topics the OrbitDB topic policy's admission limits
 * @param pinningService the Pinning Service API's limits
 * @param carPlanner the limits of a CAR answer (gateway, export)
 * @param carReader the limits of a CAR read (import)
 * @param networkPinner the limits of one pin fetched over bitswap (media, pinning service)
 * @param inboxBudget replication's inbox limits; each node counts in its own {@link InboxBudget}
 *     made from these ({@link #newInboxBudget()})
 * @param replication the replication service's timing and concurrency
 * @param identityCacheSize OrbitDB identities remembered once verified
 * @param syncHistoryMaxEntries databases the sync history remembers
 * @param leaseTtl the lifetime of a lease between relays on shared stores
 */
public record NodeTuning(
    int storageThreads,
    int storageQueue,
    int replicationQueue,
    Duration replicationFetchTimeout,
    Duration datastoreFlush,
    Duration shutdownTimeout,
    Duration bindTimeout,
    BitswapConfig bitswap,
    GossipsubConfig gossipsub,
    HeadsConfig heads,
    LogConfig log,
    AutoNatConfig autoNat,
    OrbitDbTopics.Limits topics,
    PinningServiceEngine.Limits pinningService,
    CarPlanner.Limits carPlanner,
    CarReader.Limits carReader,
    NetworkPinner.Limits networkPinner,
    InboxBudget inboxBudget,
    ReplicationService.Config replication,
    int identityCacheSize,
    int syncHistoryMaxEntries,
    Duration leaseTtl) {

  private static final Duration REPLICATION_FETCH_TIMEOUT = Duration.ofSeconds(15);

  /** What a relay runs with. */
  public static final NodeTuning DEFAULT = new NodeTuning(
      4,
      256,
      100_000,
      REPLICATION_FETCH_TIMEOUT,
      Duration.ofSeconds(1),
      Duration.ofSeconds(3),
      Duration.ofSeconds(10),
      BitswapConfig.DEFAULT,
      GossipsubConfig.DEFAULT,
      HeadsConfig.DEFAULT,
      new LogConfig(LogConfig.DEFAULT.maxConcurrentFetches(),
          LogConfig.DEFAULT.maxEntriesPerJoin(), LogConfig.DEFAULT.maxDepth(),
          REPLICATION_FETCH_TIMEOUT),
      AutoNatConfig.DEFAULT,
      OrbitDbTopics.Limits.DEFAULT,
      PinningServiceEngine.Limits.DEFAULT,
      CarPlanner.Limits.DEFAULT,
      CarReader.Limits.DEFAULT,
      NetworkPinner.Limits.DEFAULT,
      InboxBudget.defaults(),
      ReplicationService.Config.DEFAULT,
      Identities.DEFAULT_CACHE_SIZE,
      SyncHistory.DEFAULT_MAX_ENTRIES,
      PostgresCoordination.DEFAULT_LEASE_TTL);

  public NodeTuning {
    if (storageThreads < 1 || storageQueue < 1 || replicationQueue < 1) {
      throw new IllegalArgumentException("threads and queues must be positive");
    }
    Objects.requireNonNull(replicationFetchTimeout, "replicationFetchTimeout");
    Objects.requireNonNull(datastoreFlush, "datastoreFlush");
    Objects.requireNonNull(shutdownTimeout, "shutdownTimeout");
    Objects.requireNonNull(bindTimeout, "bindTimeout");
    Objects.requireNonNull(bitswap, "bitswap");
    Objects.requireNonNull(gossipsub, "gossipsub");
    Objects.requireNonNull(heads, "heads");
    Objects.requireNonNull(log, "log");
    Objects.requireNonNull(autoNat, "autoNat");
    Objects.requireNonNull(topics, "topics");
    Objects.requireNonNull(pinningService, "pinningService");
    Objects.requireNonNull(carPlanner, "carPlanner");
    Objects.requireNonNull(carReader, "carReader");
    Objects.requireNonNull(networkPinner, "networkPinner");
    Objects.requireNonNull(inboxBudget, "inboxBudget");
    Objects.requireNonNull(replication, "replication");
    Objects.requireNonNull(leaseTtl, "leaseTtl");
  }

  /** A new inbox budget of {@link #inboxBudget}'s limits, counting from zero. */
  public InboxBudget newInboxBudget() {
    return new InboxBudget(inboxBudget.perDatabase(), inboxBudget.total());
  }
}
