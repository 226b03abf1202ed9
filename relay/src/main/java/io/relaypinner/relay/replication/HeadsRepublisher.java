package io.relaypinner.relay.replication;

import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.orbitdb.log.JoinResult;
import io.relaypinner.relay.sync.SyncEngine;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Re-publishes a followed database's heads on its topic after a join that added entries some of
 * its subscribers may lack (issue 37, orbitdb#1255). OrbitDB's sync exchanges heads with a peer
 * once, when it sees the peer subscribe, and otherwise hears of entries only as messages on the
 * topic, which a writer publishes for its own writes. A reader connected to the relay alone
 * therefore never gets an entry that reached the relay any other way after it had exchanged
 * heads with the relay: an entry a writer wrote while away, handed over in the heads exchange
 * when it came back, or one a sync fetched from a re-dialled peer. The relay publishes its heads
 * (each an entry block, as OrbitDB publishes its own writes; receivers join them, and drop those
 * they have) after a join that added entries when, since its last re-publication:
 *
 * <ul>
 *   <li>heads came to it in a heads exchange ({@link #headsExchanged}), not as a message on the
 *       topic (which gossipsub has already forwarded to the topic's other peers); or
 *   <li>a peer subscribed to the topic ({@link #peerSubscribed}): its heads exchange with the
 *       relay may have run before the join ended, and a message on the topic before it
 *       subscribed never reached it. So a subscription costs at most one re-publication.
 * </ul>
 *
 * <p>Bounded so that peers cannot make the relay flood a topic: per database at most one
 * re-publication per {@link #INTERVAL} (a join within it is coalesced into one re-publication at
 * its end, which publishes the heads of then), at most {@link #MAX_HEADS} heads each (the
 * latest), and at most {@link #NODE_PER_SECOND} re-publications a second over all databases
 * (beyond, the database's turn moves to its next interval). Counted as
 * {@code heads-republished}, {@code heads-republish-coalesced} and
 * {@code heads-republish-deferred}. Time comes from the injected {@link Clock}; delays run on a
 * {@link SyncEngine.Timer}; heads are read and published on the executor. Thread-safe.
 */
final class HeadsRepublisher {
  private static final Logger LOG = LoggerFactory.getLogger(HeadsRepublisher.class);

  /** Shortest time between two re-publications of one database. */
  static final Duration INTERVAL = Duration.ofSeconds(1);
  /** Heads published at most by one re-publication (the latest). */
  static final int MAX_HEADS = 16;
  /** Re-publications at most per second over all databases. */
  static final int NODE_PER_SECOND = 100;

  /** Publishes one block on a topic (gossipsub); must not block. */
  interface Publisher {
    void publish(String topic, byte[] block);
  }

  /** Why and when one database re-publishes. Guarded by itself. */
  private static final class State {
    private long last = Long.MIN_VALUE;
    private boolean scheduled;
    private boolean exchanged;
    private boolean subscribed;
  }

  private final Publisher publisher;
  private final Function<OrbitDbAddress, Optional<List<byte[]>>> heads;
  private final Executor executor;
  private final Clock clock;
  private final SyncEngine.Timer timer;
  private final Consumer<String> counter;
  private final Map<OrbitDbAddress, State> states = new ConcurrentHashMap<>();
  /** Node-wide tokens left and when they were last refilled (clock millis). Guarded by this. */
  private double tokens = NODE_PER_SECOND;
  private long refilled = Long.MIN_VALUE;

  /**
   * @param heads a database's head blocks in clock order (empty when its replica is not open)
   * @param executor reads heads and publishes (never an event loop)
   */
  HeadsRepublisher(final Publisher publisher,
      final Function<OrbitDbAddress, Optional<List<byte[]>>> heads, final Executor executor,
      final Clock clock, final SyncEngine.Timer timer, final Consumer<String> counter) {
    this.publisher = Objects.requireNonNull(publisher, "publisher");
    this.heads = Objects.requireNonNull(heads, "heads");
    this.executor = Objects.requireNonNull(executor, "executor");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.timer = Objects.requireNonNull(timer, "timer");
    this.counter = Objects.requireNonNull(counter, "counter");
  }

  /** Heads of {@code address} came in a heads exchange (either direction). */
  void headsExchanged(final OrbitDbAddress address) {
    final State state = state(address);
    synchronized (state) {
      state.exchanged = true;
    }
  }

  /** A peer subscribed to the topic of {@code address}. */
  void peerSubscribed(final OrbitDbAddress address) {
    final State state = state(address);
    synchronized (state) {
      state.subscribed = true;
    }
  }

  /** A join of {@code address} ended: re-publish when it added entries and a reason is known. */
  void joined(final OrbitDbAddress address, final JoinResult result) {
    if (result.added().isEmpty()) {
      return;
    }
    final State state = states.get(address);
    if (state == null) {
      return;
    }
    synchronized (state) {
      if (!state.exchanged && !state.subscribed) {
        return;
      }
      state.exchanged = false;
      state.subscribed = false;
    }
    request(address, state);
  }

  /** {@code address} is no longer followed: its state goes (a pending turn finds none). */
  void forget(final OrbitDbAddress address) {
    states.remove(address);
  }

  /** Databases with re-publication state (followed ones that saw a subscription or exchange). */
  int size() {
    return states.size();
  }

  private State state(final OrbitDbAddress address) {
    return states.computeIfAbsent(address, a -> new State());
  }

  /** Publishes now if the database's interval and the node's rate allow, else at its turn. */
  private void request(final OrbitDbAddress address, final State state) {
    final long delay;
    synchronized (state) {
      if (state.scheduled) {
        counter.accept("heads-republish-coalesced");
        return;
      }
      final long now = clock.millis();
      final long due = state.last == Long.MIN_VALUE ? now : state.last + INTERVAL.toMillis();
      if (now >= due && takeToken(now)) {
        state.last = now;
        delay = -1;
      } else {
        // Before the database's interval ends, at its end; refused by the node's rate, a whole
        // interval later.
        state.scheduled = true;
        delay = now < due ? due - now : INTERVAL.toMillis();
      }
    }
    if (delay >= 0) {
      counter.accept("heads-republish-deferred");
      timer.schedule(() -> turn(address, state), Duration.ofMillis(delay));
      return;
    }
    try {
      executor.execute(() -> publish(address));
    } catch (final RejectedExecutionException e) {
      counter.accept("executor-rejected");
    }
  }

  /** A deferred re-publication's turn (on the timer's thread). */
  private void turn(final OrbitDbAddress address, final State state) {
    synchronized (state) {
      state.scheduled = false;
    }
    if (states.get(address) == state) {
      request(address, state);
    }
  }

  private void publish(final OrbitDbAddress address) {
    final List<byte[]> blocks = heads.apply(address).orElse(List.of());
    if (blocks.isEmpty()) {
      return;
    }
    final List<byte[]> latest = blocks.subList(Math.max(0, blocks.size() - MAX_HEADS),
        blocks.size());
    for (final byte[] block : latest) {
      publisher.publish(address.topic(), block);
    }
    counter.accept("heads-republished");
    LOG.debug("{}: re-published {} head(s) on its topic", address, latest.size());
  }

  /** Takes one of the node's re-publications of this second, if any is left. */
  private synchronized boolean takeToken(final long now) {
    if (refilled == Long.MIN_VALUE) {
      refilled = now;
    }
    tokens = Math.min(NODE_PER_SECOND, tokens + (now - refilled) * NODE_PER_SECOND / 1000.0);
    refilled = now;
    if (tokens < 1) {
      return false;
    }
    tokens--;
    return true;
  }
}
