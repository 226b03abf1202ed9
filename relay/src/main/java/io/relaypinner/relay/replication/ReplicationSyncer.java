package io.relaypinner.relay.replication;

import io.relaypinner.ipfs.blockstore.StoreUnavailableException;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.orbitdb.OrbitDbReplica;
import io.relaypinner.orbitdb.OrbitDbReplicas;
import io.relaypinner.relay.sync.DatabaseSyncer;
import io.relaypinner.relay.sync.SyncContext;
import io.relaypinner.relay.sync.SyncResult;
import io.relaypinner.relay.sync.SyncTrigger;
import java.time.Clock;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Step 2 of replication, the {@link DatabaseSyncer} the sync engine runs: checks the operator's
 * policy ({@code RELAY_ORBITDB_ALLOW}, {@code RELAY_ORBITDB_DENY}), opens the database's replica
 * (manifest and controller, from the store or over bitswap), makes sure it and its controller's
 * database have a {@link DatabaseSession} and that the replica's joins feed the
 * {@link MediaPath}, then runs {@link DatabaseSync} until the log is complete. With shared
 * stores only the database's owner does that; another relay runs the
 * {@link ReplicationCoordinator#followerSync follower sync}, and every join is told to the
 * {@link ReplicationCoordinator} (the owner announces its new heads) and to the
 * {@link HeadsRepublisher} (new entries some topic peers may lack are published on the topic).
 *
 * <p>A database that was not followed (an explicit {@code POST /pinning/sync} or an import of an
 * address no peer subscribed to) gets a session only once its replica opened; when the sync
 * succeeds it is followed ({@code follow}, which may refuse: then its session closes again), when
 * it fails nothing of it stays.
 */
final class ReplicationSyncer implements DatabaseSyncer {
  private static final Logger LOG = LoggerFactory.getLogger(ReplicationSyncer.class);

  private final OrbitDbReplicas replicas;
  private final DatabaseSessions sessions;
  private final ReplicationNetwork network;
  private final DatabaseSync databaseSync;
  private final MediaPath media;
  private final ReplicationCoordinator coordinator;
  private final HeadsRepublisher republisher;
  private final Predicate<String> permitted;
  private final Function<String, CompletableFuture<Boolean>> follow;
  private final Clock clock;
  private final Consumer<String> counter;
  /** Replicas whose joins feed the media path (weak: an unfollowed replica is let go). */
  private final Set<OrbitDbReplica> wired =
      Collections.synchronizedSet(Collections.newSetFromMap(new WeakHashMap<>()));

  /**
   * @param permitted the operator's policy on database addresses
   * @param follow follows a database an explicit sync reached (completes false when refused)
   */
  ReplicationSyncer(final OrbitDbReplicas replicas, final DatabaseSessions sessions,
      final ReplicationNetwork network, final DatabaseSync databaseSync, final MediaPath media,
      final ReplicationCoordinator coordinator, final HeadsRepublisher republisher,
      final Predicate<String> permitted,
      final Function<String, CompletableFuture<Boolean>> follow, final Clock clock,
      final Consumer<String> counter) {
    this.replicas = Objects.requireNonNull(replicas, "replicas");
    this.sessions = Objects.requireNonNull(sessions, "sessions");
    this.network = Objects.requireNonNull(network, "network");
    this.databaseSync = Objects.requireNonNull(databaseSync, "databaseSync");
    this.media = Objects.requireNonNull(media, "media");
    this.coordinator = Objects.requireNonNull(coordinator, "coordinator");
    this.republisher = Objects.requireNonNull(republisher, "republisher");
    this.permitted = Objects.requireNonNull(permitted, "permitted");
    this.follow = Objects.requireNonNull(follow, "follow");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.counter = Objects.requireNonNull(counter, "counter");
  }

  @Override
  public SyncResult sync(final SyncContext context) throws Exception {
    if (!permitted.test(context.address())) {
      throw new IllegalStateException(context.address()
          + " is not followed by this relay (RELAY_ORBITDB_ALLOW / RELAY_ORBITDB_DENY)");
    }
    final long start = clock.millis();
    final OrbitDbAddress address = OrbitDbAddress.parse(context.address());
    final boolean followed = sessions.has(address);
    if (context.trigger() == SyncTrigger.RESUME && (!followed
        || network.topicPeers(address.topic()).isEmpty())) {
      // Resuming a failed sync helps only a followed database with someone on its topic to
      // fetch from; otherwise a peer's next subscription or message syncs it. Not recorded.
      counter.accept("syncs-resume-skipped");
      return new SyncResult(context.address(), 0, 0, 0, false, false, List.of(), false);
    }
    LOG.debug("sync of {} ({}): opening", address, context.trigger());
    final OrbitDbReplica replica = open(address, context);
    final DatabaseSession session = sessions.open(address).orElseThrow(() -> {
      counter.accept("bound.sessions");
      return new IllegalStateException("not syncing " + address + ": "
          + DatabaseSessions.MAX_SESSIONS + " databases have sessions already");
    });
    final DatabaseSession acSession = replica.accessControllerDatabase()
        .flatMap(acDb -> sessions.openController(address, acDb.address())).orElse(null);
    wire(replica);
    replica.accessControllerDatabase().ifPresent(this::wire);
    context.countOperation();
    final SyncResult result;
    try {
      if (coordinator.owns(address)) {
        media.databaseOpened(replica);
        result = runAsOwner(context, address, session, replica, acSession, start);
      } else {
        // Another relay on the shared stores replicates it: exchange heads with our own peers
        // (a reader here gets current heads), catch up with the owner and with those peers.
        databaseSync.dial(context, session, acSession);
        result = coordinator.followerSync(context, session, replica);
        // What this relay did not pin as a follower, its next sync as the owner scans for.
        session.scanNext();
      }
    } catch (final Exception e) {
      // A sync that failed (a store outage, a lost lease) may have left pins undone: the next
      // sync scans the log even with nothing new.
      session.scanNext();
      if (!followed) {
        forget(address);
      }
      throw e;
    }
    if (!followed) {
      followReached(address);
    } else if (context.trigger() == SyncTrigger.HTTP) {
      // Asked for by name: a followed database becomes requested (never evicted for a newer
      // one at the followed-database cap, see OrbitDbTopics).
      try {
        follow.apply(address.topic());
      } catch (final RuntimeException e) {
        LOG.debug("{}: could not be marked as requested: {}", address, e.toString());
      }
    }
    return result;
  }

  /**
   * The owner's sync, for as long as this relay owns the database: a relay that cannot renew
   * its lease (PostgreSQL unreachable) stops acting as the owner before another relay may take
   * the lease over, so its sync stops too and fails as a store outage (retried with back-off;
   * the retry runs as the owner again once the lease is renewed, or as a follower).
   */
  private SyncResult runAsOwner(final SyncContext context, final OrbitDbAddress address,
      final DatabaseSession session, final OrbitDbReplica replica,
      final DatabaseSession acSession, final long start) throws Exception {
    final SyncContext owned = new SyncContext() {
      @Override
      public String address() {
        return context.address();
      }

      @Override
      public SyncTrigger trigger() {
        return context.trigger();
      }

      @Override
      public java.time.Duration timeout() {
        return context.timeout();
      }

      @Override
      public void countOperation() {
        context.countOperation();
      }

      @Override
      public boolean cancelled() {
        return context.cancelled() || !coordinator.owns(address);
      }
    };
    try {
      return databaseSync.run(owned, session, replica, acSession, start,
          () -> coordinator.ownedUntil(address));
    } catch (final InterruptedException e) {
      if (context.cancelled() || coordinator.owns(address)) {
        throw e;
      }
      counter.accept("syncs-lease-lost");
      LOG.info("{}: this relay no longer holds its lease (not renewed in time); it stopped "
          + "replicating it", address);
      throw new StoreUnavailableException("postgres", "the lease on " + address
          + " was not renewed in time; this relay stopped replicating it", null);
    }
  }

  /** A database an explicit sync reached is followed, or forgotten when that is refused. */
  private void followReached(final OrbitDbAddress address) {
    CompletableFuture<Boolean> followed;
    try {
      followed = follow.apply(address.topic());
    } catch (final RuntimeException e) {
      followed = CompletableFuture.failedFuture(e);
    }
    followed.whenComplete((ok, error) -> {
      if (error != null || !Boolean.TRUE.equals(ok)) {
        counter.accept("explicit-follow-refused");
        forget(address);
      }
    });
  }

  /** Drops what a sync of an unfollowed database left (unless it became followed meanwhile). */
  private void forget(final OrbitDbAddress address) {
    sessions.close(address);
    if (!sessions.has(address)) {
      republisher.forget(address);
      replicas.unfollow(address);
    }
  }

  private OrbitDbReplica open(final OrbitDbAddress address, final SyncContext context)
      throws Exception {
    // Any connected peer may have the manifest: bitswap knows a peer only once its identify was
    // processed, which under load can come after a writer's last write (and its explicit sync).
    // Such a peer gets our want when its identify lists bitswap; only with nobody connected at
    // all does the sync fail at once.
    if (replicas.replica(address).isEmpty()
        && !replicas.context().blockstore().has(address.manifest()) && !network.reachPeers()) {
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

  /** Hooks the replica's joins once into the media path of its database's session. */
  private void wire(final OrbitDbReplica replica) {
    if (wired.add(replica)) {
      replica.addListener(result -> {
        // A relay that follows without owning pins only what its own peers sent (followerSync).
        if (coordinator.pinsJoins(replica.address())) {
          sessions.get(replica.address())
              .ifPresent(session -> media.onJoin(session, replica, result));
        }
        coordinator.joined(replica, result);
        republisher.joined(replica.address(), result);
      });
    }
  }
}
