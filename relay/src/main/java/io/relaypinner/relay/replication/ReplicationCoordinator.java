package io.relaypinner.relay.replication;

import io.relaypinner.ipfs.blockstore.StoreUnavailableException;
import io.relaypinner.ipfs.datastore.Fence;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.MultiformatException;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.orbitdb.OrbitDbReplica;
import io.relaypinner.orbitdb.OrbitDbReplicas;
import io.relaypinner.orbitdb.log.JoinResult;
import io.relaypinner.relay.coordination.Coordination;
import io.relaypinner.relay.sync.SyncContext;
import io.relaypinner.relay.sync.SyncResult;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Replication among several relays on shared stores (issue 24), kept out of the sync path: the
 * relay that owns a database ({@link io.relaypinner.relay.coordination.DatabaseOwnership}) runs
 * its full syncs (heads exchanges, frontier, media) and announces each change of its heads; a
 * relay that follows the database without owning it runs a <em>follower sync</em>: it joins the
 * heads its own peers sent (fetching what they link to from those peers) and the heads stored
 * by the owner (read from the shared stores, no network), and announces what it added. Heads
 * announced by the others are joined the same way, so every relay answers readers with current
 * heads. A database announced that this relay does not follow is followed (so that it can take
 * it over when its owner dies).
 *
 * <p>With {@link Coordination#local()} this relay owns everything and none of this runs.
 */
final class ReplicationCoordinator {
  private static final Logger LOG = LoggerFactory.getLogger(ReplicationCoordinator.class);

  /** How long a follower sync waits for its joins. */
  static final java.time.Duration FOLLOWER_WAIT = java.time.Duration.ofSeconds(5);

  private volatile Coordination coordination = Coordination.local();
  private final OrbitDbReplicas replicas;
  private final Executor executor;
  private final Clock clock;
  private final Consumer<String> counter;
  private final PeerJoins peerJoins;
  private volatile Consumer<String> caughtUp = address -> { };

  /** What a follower does with what its own peers sent: pin the entries and their media. */
  interface PeerJoins {
    void joined(DatabaseSession session, OrbitDbReplica replica, JoinResult result);
  }

  ReplicationCoordinator(final OrbitDbReplicas replicas, final Executor executor,
      final Clock clock, final Consumer<String> counter, final PeerJoins peerJoins) {
    this.peerJoins = Objects.requireNonNull(peerJoins, "peerJoins");
    this.replicas = Objects.requireNonNull(replicas, "replicas");
    this.executor = Objects.requireNonNull(executor, "executor");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.counter = Objects.requireNonNull(counter, "counter");
  }

  /** Coordinates through {@code coordination} from now on (before {@link #start}). */
  void use(final Coordination coordination) {
    this.coordination = Objects.requireNonNull(coordination, "coordination");
  }

  /**
   * Hooks the coordination's events: a database taken over is synced as its owner
   * ({@code takeover}, also after a follower sync running then); one announced and not
   * followed is followed ({@code follow}) and synced ({@code sync}). A follower's replica that
   * becomes complete outside a sync (joining the owner's announced heads) is told to
   * {@code caughtUp} (on the executor; it records the sync history).
   */
  void start(final Consumer<String> takeover, final Consumer<String> sync,
      final Consumer<String> follow, final Consumer<String> caughtUp) {
    this.caughtUp = Objects.requireNonNull(caughtUp, "caughtUp");
    coordination.ownership().onAcquired(name -> {
      if (OrbitDbAddress.isValid(name)) {
        counter.accept("ownership-acquired");
        takeover.accept(name);
      }
    });
    coordination.heads().onAnnounced((address, heads) -> {
      final Optional<OrbitDbAddress> parsed = OrbitDbAddress.tryParse(address);
      if (parsed.isEmpty()) {
        return;
      }
      counter.accept("heads-announced-heard");
      final var replica = replicas.replica(parsed.get());
      if (replica.isEmpty()) {
        coordination.ownership().standBy(address);
        // Follow it (to take it over if its owner dies); the sync opens it from the stores.
        follow.accept(address);
        sync.accept(address);
        return;
      }
      try {
        executor.execute(() -> joinCids(replica.get(), heads));
      } catch (final RejectedExecutionException e) {
        counter.accept("executor-rejected");
      }
    });
  }

  Coordination coordination() {
    return coordination;
  }

  /**
   * This relay follows {@code address}: it wants to own it, and tells the others (an
   * announcement without heads), who follow it too so that one of them takes it over if this
   * relay dies before it announced any heads. Never blocks.
   */
  void followed(final OrbitDbAddress address) {
    final Coordination current = coordination;
    current.ownership().want(address.toString());
    // A PostgreSQL round trip: not on the caller's thread (an event loop may follow).
    try {
      executor.execute(() -> {
        try {
          current.heads().announce(address.toString(), List.of(), 0);
        } catch (final StoreUnavailableException e) {
          counter.accept("heads-announce-failed");
        }
      });
    } catch (final RejectedExecutionException e) {
      counter.accept("executor-rejected");
    }
  }

  void unfollowed(final OrbitDbAddress address) {
    coordination.ownership().drop(address.toString());
  }

  boolean owns(final OrbitDbAddress address) {
    return coordination.ownership().owns(address.toString());
  }

  /**
   * Until when (clock millis) {@link #owns} stays true for {@code address} without an event:
   * a sync running as its owner looks again then ({@code Long.MAX_VALUE} alone).
   */
  long ownedUntil(final OrbitDbAddress address) {
    return coordination.ownership().ownedUntil(address.toString());
  }

  /**
   * Whether joins of {@code address} pin their entries and media here: on its owner, and for a
   * database nobody leases (an access controller's database, pinned with the database that uses
   * it). A follower pins only what its own peers sent ({@link #followerSync}).
   */
  boolean pinsJoins(final OrbitDbAddress address) {
    return owns(address) || !coordination.ownership().wants(address.toString());
  }

  /** After a join of {@code replica}: the owner announces new heads. */
  void joined(final OrbitDbReplica replica, final JoinResult result) {
    if (!result.added().isEmpty() && owns(replica.address())) {
      announce(replica);
    }
  }

  private void announce(final OrbitDbReplica replica) {
    final List<String> heads = new ArrayList<>();
    for (final Cid head : replica.log().heads()) {
      heads.add(head.toString());
    }
    try {
      // The owner's carries its lease's epoch: the others drop a former owner's late one.
      final long epoch = coordination.ownership().fence(replica.address().toString())
          .map(Fence::epoch).orElse(0L);
      coordination.heads().announce(replica.address().toString(), heads, epoch);
      counter.accept("heads-announced");
    } catch (final StoreUnavailableException e) {
      counter.accept("heads-announce-failed");
      LOG.debug("{}: heads not announced: {}", replica.address(), e.getMessage());
    }
  }

  /**
   * The sync of a database this relay follows but does not own: joins the heads its peers sent
   * and the heads the owner stored, then announces what it added.
   */
  SyncResult followerSync(final SyncContext context, final DatabaseSession session,
      final OrbitDbReplica replica) throws Exception {
    counter.accept("syncs-follower");
    final List<CompletableFuture<JoinResult>> joins = new ArrayList<>();
    for (final byte[] head : session.takeHeads()) {
      // Heads our own peers sent: fetched from them, so pinned here (the owner may not reach
      // those peers); the media work queue keeps the owner from pinning the same media again.
      joins.add(replica.joinBlock(head).thenApply(result -> {
        peerJoins.joined(session, replica, result);
        return result;
      }));
    }
    for (final Cid head : replica.log().storedHeads()) {
      joins.add(replica.join(head));
    }
    long added = 0;
    // Stored heads are read from the shared stores; a join still fetching from a peer goes on
    // in the background and is announced when it ends (as a join of the owner is).
    final long deadline = clock.millis()
        + Math.min(context.timeout().toMillis(), FOLLOWER_WAIT.toMillis());
    for (final CompletableFuture<JoinResult> join : joins) {
      final long left = Math.max(1, deadline - clock.millis());
      try {
        added += join.get(left, TimeUnit.MILLISECONDS).added().size();
      } catch (final java.util.concurrent.ExecutionException e) {
        counter.accept("joins-failed");
      } catch (final java.util.concurrent.TimeoutException e) {
        counter.accept("follower-joins-pending");
        join.thenAccept(result -> {
          if (!result.added().isEmpty()) {
            announce(replica);
            caughtUpIfComplete(replica);
          }
        });
      }
    }
    if (added > 0) {
      announce(replica);
    }
    final var log = replica.log();
    if (!log.isComplete()) {
      counter.accept("syncs-follower-incomplete");
    }
    return new SyncResult(replica.address().toString(), log.size(), added, log.heads().size(),
        added > 0, false, List.of(), log.isComplete());
  }

  private void joinCids(final OrbitDbReplica replica, final List<String> heads) {
    final Set<Cid> cids = new LinkedHashSet<>();
    for (final String head : heads) {
      try {
        cids.add(Cid.parse(head));
      } catch (final MultiformatException e) {
        counter.accept("heads-announced-malformed");
        return;
      }
    }
    if (cids.isEmpty()) {
      cids.addAll(replica.log().storedHeads());
    }
    final List<CompletableFuture<JoinResult>> joins = new ArrayList<>();
    for (final Cid cid : cids) {
      if (!replica.log().contains(cid)) {
        joins.add(replica.join(cid));
      }
    }
    // Parents that were not on the shared stores at an earlier try are there now: fetch again.
    if (joins.isEmpty()) {
      return;
    }
    CompletableFuture.allOf(joins.toArray(CompletableFuture[]::new)).whenComplete((ok, e) -> {
      if (!replica.log().isComplete()) {
        replica.log().retryMissingNow();
        replica.resume();
      } else {
        caughtUpIfComplete(replica);
      }
    });
  }

  /** A follower's replica that is complete now: its sync history is recorded (off this thread). */
  private void caughtUpIfComplete(final OrbitDbReplica replica) {
    if (owns(replica.address()) || !replica.log().isComplete()) {
      return;
    }
    try {
      executor.execute(() -> {
        try {
          caughtUp.accept(replica.address().toString());
        } catch (final RuntimeException e) {
          counter.accept("caught-up-not-recorded");
          LOG.debug("{}: caught up, not recorded: {}", replica.address(), e.toString());
        }
      });
    } catch (final RejectedExecutionException e) {
      counter.accept("executor-rejected");
    }
  }
}
