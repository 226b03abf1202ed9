package io.relaypinner.relay.replication;

import io.relaypinner.ipfs.blockstore.StoreUnavailableException;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.MultiformatException;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.orbitdb.OrbitDbReplica;
import io.relaypinner.orbitdb.OrbitDbReplicas;
import io.relaypinner.orbitdb.log.JoinResult;
import io.relaypinner.relay.coordination.Coordination;
import io.relaypinner.relay.sync.SyncContext;
import io.relaypinner.relay.sync.SyncResult;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
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

  private final Coordination coordination;
  private final OrbitDbReplicas replicas;
  private final Executor executor;
  private final Consumer<String> counter;

  ReplicationCoordinator(final Coordination coordination, final OrbitDbReplicas replicas,
      final Executor executor, final Consumer<String> counter) {
    this.coordination = Objects.requireNonNull(coordination, "coordination");
    this.replicas = Objects.requireNonNull(replicas, "replicas");
    this.executor = Objects.requireNonNull(executor, "executor");
    this.counter = Objects.requireNonNull(counter, "counter");
  }

  /**
   * Hooks the coordination's events: a database taken over is synced ({@code sync}); one
   * announced and not followed is followed ({@code follow}).
   */
  void start(final Consumer<String> sync, final Consumer<String> follow) {
    coordination.ownership().onAcquired(name -> {
      if (OrbitDbAddress.isValid(name)) {
        counter.accept("ownership-acquired");
        sync.accept(name);
      }
    });
    coordination.heads().onAnnounced((address, heads) -> {
      if (!OrbitDbAddress.isValid(address)) {
        return;
      }
      counter.accept("heads-announced-heard");
      final var replica = replicas.replica(OrbitDbAddress.parse(address));
      if (replica.isEmpty()) {
        follow.accept(address);
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

  void followed(final OrbitDbAddress address) {
    coordination.ownership().want(address.toString());
  }

  void unfollowed(final OrbitDbAddress address) {
    coordination.ownership().drop(address.toString());
  }

  boolean owns(final OrbitDbAddress address) {
    return coordination.ownership().owns(address.toString());
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
      coordination.heads().announce(replica.address().toString(), heads);
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
      joins.add(replica.joinBlock(head));
    }
    for (final Cid head : replica.log().storedHeads()) {
      joins.add(replica.join(head));
    }
    long added = 0;
    final long deadline = System.nanoTime() + context.timeout().toNanos();
    for (final CompletableFuture<JoinResult> join : joins) {
      final long left = Math.max(1, deadline - System.nanoTime());
      try {
        added += join.get(left, TimeUnit.NANOSECONDS).added().size();
      } catch (final java.util.concurrent.ExecutionException e) {
        counter.accept("joins-failed");
      }
    }
    if (added > 0) {
      announce(replica);
    }
    final var log = replica.log();
    return new SyncResult(replica.address().toString(), log.size(), added, log.heads().size(),
        added > 0, false, List.of(), List.of());
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
    for (final Cid cid : cids) {
      if (!replica.log().contains(cid)) {
        replica.join(cid);
      }
    }
  }
}
