package io.relaypinner.relay.replication;

import io.relaypinner.common.Failures;
import io.relaypinner.multiformats.PeerId;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.orbitdb.OrbitDbReplica;
import io.relaypinner.orbitdb.OrbitDbReplicas;
import io.relaypinner.orbitdb.heads.HeadsEndpoint;
import io.relaypinner.relay.pubsub.OrbitDbTopics;
import io.relaypinner.relay.sync.SyncEngine;
import io.relaypinner.relay.sync.SyncTrigger;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Step 1 of replication: everything that arrives for a database goes into its
 * {@link DatabaseSession}'s inbox and queues a sync on the {@link SyncEngine}. It hears
 * {@link OrbitDbTopics} (the one pubsub listener: follows, unfollows, messages on followed
 * topics, peers subscribing) and the heads exchange ({@code /orbitdb/heads/<address>}, both
 * directions; our heads are answered from the replica, also to readers that come after the
 * writer left). An explicit sync re-dials the peers seen on the topic (spec 3.5).
 *
 * <p>A followed or unfollowed database is told to the {@link ReplicationCoordinator} (with shared
 * stores: this relay wants to own it, or no longer does). Subscriptions and heads that came in a
 * heads exchange are told to the {@link HeadsRepublisher}.
 *
 * <p>Called on event loops: nothing here blocks.
 */
final class ReplicationIntake implements OrbitDbTopics.Listener {
  /** How long a heads exchange waits for its database's replica to open. */
  static final Duration HEADS_OPEN_TIMEOUT = Duration.ofSeconds(5);

  private final DatabaseSessions sessions;
  private final OrbitDbReplicas replicas;
  private final ReplicationNetwork network;
  private final Executor executor;
  private final ReplicationCoordinator coordinator;
  private final HeadsRepublisher republisher;
  private final Consumer<String> counter;
  private final Duration exchangeTimeout;
  private volatile SyncEngine engine;
  private volatile boolean closed;

  ReplicationIntake(final DatabaseSessions sessions, final OrbitDbReplicas replicas,
      final ReplicationNetwork network, final Executor executor,
      final ReplicationCoordinator coordinator, final HeadsRepublisher republisher,
      final Consumer<String> counter, final Duration exchangeTimeout) {
    this.sessions = Objects.requireNonNull(sessions, "sessions");
    this.replicas = Objects.requireNonNull(replicas, "replicas");
    this.network = Objects.requireNonNull(network, "network");
    this.executor = Objects.requireNonNull(executor, "executor");
    this.coordinator = Objects.requireNonNull(coordinator, "coordinator");
    this.republisher = Objects.requireNonNull(republisher, "republisher");
    this.counter = Objects.requireNonNull(counter, "counter");
    this.exchangeTimeout = Objects.requireNonNull(exchangeTimeout, "exchangeTimeout");
  }

  /** Syncs are queued on {@code syncEngine} from now on. */
  void start(final SyncEngine syncEngine) {
    this.engine = Objects.requireNonNull(syncEngine, "syncEngine");
  }

  void close() {
    closed = true;
  }

  @Override
  public void onFollow(final String topic) {
    final Optional<OrbitDbAddress> parsed = OrbitDbAddress.tryParse(topic);
    if (parsed.isEmpty()) {
      return;
    }
    final OrbitDbAddress address = parsed.get();
    if (sessions.open(address).isPresent()) {
      // With shared stores: this relay wants to own it, and the others hear of it.
      coordinator.followed(address);
      trigger(topic, SyncTrigger.FOLLOW);
    } else {
      counter.accept("bound.sessions");
    }
  }

  @Override
  public void onUnfollow(final String topic) {
    final Optional<OrbitDbAddress> parsed = OrbitDbAddress.tryParse(topic);
    if (parsed.isEmpty()) {
      return;
    }
    final OrbitDbAddress address = parsed.get();
    sessions.close(address);
    if (!sessions.has(address)) {
      republisher.forget(address);
      replicas.unfollow(address);
      coordinator.unfollowed(address);
    }
  }

  @Override
  public void onMessage(final String topic, final byte[] data, final PeerId from) {
    known(topic).ifPresent(session -> {
      if (offer(session, data, "heads-pubsub")) {
        trigger(topic, SyncTrigger.MESSAGE);
      }
    });
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
  @Override
  public void onPeerSubscribed(final String topic, final PeerId peer) {
    final Optional<DatabaseSession> found = known(topic);
    if (found.isEmpty()) {
      return;
    }
    final DatabaseSession session = found.get();
    // Its heads exchange below may end before a running join does: the join's entries are
    // re-published on the topic then.
    republisher.peerSubscribed(session.address());
    final Optional<OrbitDbReplica> replica = replicas.replica(session.address());
    if (replica.isPresent() && network.isConnected(peer) && !closed) {
      counter.accept("exchanges-on-subscribe");
      network.exchangeHeads(peer, session.address(), endpoint(session))
          .orTimeout(exchangeTimeout.toMillis(), TimeUnit.MILLISECONDS)
          .whenComplete((result, error) -> {
            counter.accept(error == null ? "exchanges-dialled" : "exchanges-failed");
            if (error != null) {
              // The next sync dials it again.
              saw(session, peer, true);
              trigger(topic, SyncTrigger.MESSAGE);
            }
          });
      if (replica.get().accessControllerDatabase().isEmpty()) {
        saw(session, peer, false);
        return;
      }
    }
    saw(session, peer, true);
    trigger(topic, SyncTrigger.MESSAGE);
  }

  /** Remembers a peer on {@code session}'s topic; counted when no budget is left for it. */
  private void saw(final DatabaseSession session, final PeerId peer, final boolean dialNext) {
    if (!session.sawPeer(peer, dialNext)) {
      counter.accept("bound.peers");
    }
  }

  /** The heads-exchange side of a database with a session (inbound streams and our dials). */
  Optional<HeadsEndpoint> endpoint(final OrbitDbAddress address) {
    return sessions.get(address).map(this::endpoint);
  }

  HeadsEndpoint endpoint(final DatabaseSession session) {
    final OrbitDbAddress address = session.address();
    return new HeadsEndpoint() {
      @Override
      public CompletableFuture<List<byte[]>> heads() {
        // After a restart a reader may ask before the first sync opened the replica: open it
        // (from the store) rather than answer with no heads.
        return replicas.follow(address)
            .orTimeout(HEADS_OPEN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
            .thenApplyAsync(replica -> replica.log().headBlocks(), executor)
            .exceptionally(error -> {
              // Not open in time or not openable: no heads to give. A JVM error is no answer.
              Failures.rethrowIfFatal(error);
              return List.of();
            });
      }

      @Override
      public void onHead(final byte[] block, final PeerId from) {
        saw(session, from, false);
        // Not seen on the topic: once joined, the topic's other peers hear of it from us.
        republisher.headsExchanged(address);
        if (offer(session, block, "heads-exchange")) {
          trigger(address.topic(), SyncTrigger.MESSAGE);
        }
      }
    };
  }

  /**
   * An explicit sync was asked for (also one that coalesces onto a sync already queued or
   * running): re-dial the peers seen on the topic that are not connected now (spec 3.5).
   */
  void onExplicitRequest(final String topic) {
    final Optional<DatabaseSession> session = known(topic);
    if (session.isEmpty()) {
      return;
    }
    for (final PeerId peer : session.get().seenPeers()) {
      if (network.isConnected(peer)) {
        continue;
      }
      counter.accept("reconnects");
      session.get().redialStarted();
      network.redial(peer).whenComplete((connected, error) -> {
        if (Boolean.TRUE.equals(connected)) {
          saw(session.get(), peer, true);
          trigger(topic, SyncTrigger.MESSAGE);
        }
        session.get().redialEnded();
      });
    }
  }

  private boolean offer(final DatabaseSession session, final byte[] block, final String source) {
    final DatabaseSession.Offer offer = session.offer(block);
    switch (offer) {
      case QUEUED -> counter.accept(source);
      case QUEUED_DROPPING_OLDEST -> {
        counter.accept(source);
        counter.accept("bound.inbox-database");
      }
      case DROPPED_OVERSIZED -> counter.accept("bound.inbox-oversized");
      case DROPPED_FULL -> counter.accept("bound.inbox-total");
      default -> throw new IllegalStateException(offer.name());
    }
    return offer == DatabaseSession.Offer.QUEUED
        || offer == DatabaseSession.Offer.QUEUED_DROPPING_OLDEST;
  }

  private Optional<DatabaseSession> known(final String topic) {
    return OrbitDbAddress.tryParse(topic).flatMap(sessions::get);
  }

  void trigger(final String topic, final SyncTrigger trigger) {
    final SyncEngine current = engine;
    if (current != null && !closed) {
      current.enqueue(topic, trigger);
    }
  }
}
