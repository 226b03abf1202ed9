package io.relaypinner.relay.replication;

import io.relaypinner.common.Failures;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.PeerId;
import io.relaypinner.orbitdb.OrbitDbReplica;
import io.relaypinner.orbitdb.heads.HeadsEndpoint;
import io.relaypinner.orbitdb.log.Entry;
import io.relaypinner.orbitdb.log.JoinResult;
import io.relaypinner.orbitdb.log.OrbitDbLog;
import io.relaypinner.relay.sync.SyncContext;
import io.relaypinner.relay.sync.SyncEngine;
import io.relaypinner.relay.sync.SyncResult;
import io.relaypinner.relay.sync.SyncTrigger;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One sync of one followed database (spec 3.5), run by the sync engine on its worker thread:
 * dials heads exchanges, joins the heads in the session's inbox as they arrive, fetches the log's
 * frontier, and ends <b>only when the log is complete as far as the heads known to the relay</b>
 * (and quiet for {@link Config#quietPeriod()}, and either an update arrived or the update window
 * passed). A sync of a log with entries to which nothing new came ends as soon as every peer it
 * asked has answered and its heads are joined, no re-dial is running and the log is complete:
 * "nothing new" is known then, and the caller of {@code POST /pinning/sync} is not kept waiting
 * for the window. Peers queued to be dialled while it runs (a re-dial that connected) are
 * dialled by it too. A sync whose log stays incomplete keeps running: past
 * {@code RELAY_PINNING_SYNC_TIMEOUT_MS} the engine answers 504 {@code sync_timeout}, counts it in
 * {@code timedOutSyncs} and cools the topic down; at {@link Config#giveUpFactor()} times that
 * timeout it fails with {@link IncompleteLogException} (counted in {@code failedSyncs}); a sync
 * whose log is complete then but that never became quiet (entries kept arriving) ends there as a
 * success instead. So {@code /pinning/databases} lists exactly the databases that were complete.
 *
 * <p>Decisions are taken on the injected {@link Clock}; the sync waits for events, not by
 * polling: a head offered to the session, a peer queued to dial, a heads exchange or a join that
 * ends, a re-dial that ends, or the next of its deadlines (the join hold, the next frontier
 * resumption, the end of the quiet period or of the update window, the lease's end, giving up),
 * which the {@link SyncEngine.Timer} delivers as an event at that time of the clock.
 */
final class DatabaseSync {
  private static final Logger LOG = LoggerFactory.getLogger(DatabaseSync.class);

  /** Heads exchanges dialled at once by one sync. */
  static final int MAX_DIALS_PER_SYNC = 32;
  /**
   * How long new heads wait for the database's running join before they get one of their own:
   * meanwhile they queue, and the next join takes them all (one barrier and one datastore commit
   * for the lot), so a writer's burst costs fewer fsyncs the further the relay falls behind.
   */
  static final long JOIN_HOLD_MILLIS = 100;

  /**
   * Limits of a sync.
   *
   * @param updateWindow how long a sync waits for an update before its fallback scan
   * @param quietPeriod how long without new heads or entries ends the wait once complete
   * @param dialTimeout how long one heads exchange may take
   * @param resumeEvery how often a sync asks the log to fetch its frontier again
   * @param giveUpFactor a sync of an incomplete log fails after this many sync timeouts
   */
  record Config(Duration updateWindow, Duration quietPeriod, Duration dialTimeout,
      Duration resumeEvery, int giveUpFactor) {
    static final Config DEFAULT = new Config(Duration.ofSeconds(5), Duration.ofMillis(300),
        Duration.ofSeconds(10), Duration.ofMillis(500), 3);
  }

  /** The log is still missing entries when the sync gives up. */
  static final class IncompleteLogException extends Exception {
    private static final long serialVersionUID = 1L;

    IncompleteLogException(final String message) {
      super(message);
    }
  }

  private final ReplicationNetwork network;
  private final Function<DatabaseSession, HeadsEndpoint> endpoints;
  private final MediaPath media;
  private final Clock clock;
  private final SyncEngine.Timer timer;
  private final Config config;
  private final Consumer<String> counter;

  DatabaseSync(final ReplicationNetwork network,
      final Function<DatabaseSession, HeadsEndpoint> endpoints, final MediaPath media,
      final Clock clock, final SyncEngine.Timer timer, final Config config,
      final Consumer<String> counter) {
    this.network = Objects.requireNonNull(network, "network");
    this.endpoints = Objects.requireNonNull(endpoints, "endpoints");
    this.media = Objects.requireNonNull(media, "media");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.timer = Objects.requireNonNull(timer, "timer");
    this.config = Objects.requireNonNull(config, "config");
    this.counter = Objects.requireNonNull(counter, "counter");
  }

  /**
   * Runs the sync of {@code session}'s open {@code replica}.
   *
   * @param acSession the session of the database of an {@code orbitdb} access controller, or
   *     null
   * @param start when the sync began (clock millis), opening included
   * @param ownedUntil until when (clock millis) {@code context} cannot turn cancelled unless the
   *     sync is interrupted or woken: the end of this relay's lease on the database (as owner),
   *     when the sync looks at {@link SyncContext#cancelled()} again; {@link Long#MAX_VALUE}
   *     when ownership cannot lapse
   */
  SyncResult run(final SyncContext context, final DatabaseSession session,
      final OrbitDbReplica replica, final DatabaseSession acSession, final long start,
      final LongSupplier ownedUntil) throws Exception {
    final OrbitDbLog log = replica.log();
    final long windowEnd = start + Math.min(config.updateWindow().toMillis(),
        context.timeout().toMillis() / 2);
    final long giveUp = start + context.timeout().toMillis() * config.giveUpFactor();
    if (context.trigger() == SyncTrigger.HTTP) {
      // An operator asked: missing blocks are fetched now, not after their back-off.
      log.retryMissingNow();
    }
    final List<CompletableFuture<?>> exchanges = dial(context, session, acSession);
    // A topic-message sync with no heads queued and no peer to ask (a follow-up of a sync that
    // already joined the message's heads) has nothing to wait for: it ends once quiet instead
    // of holding its slot for the whole update window.
    final boolean nothingToAwait = context.trigger() == SyncTrigger.MESSAGE
        && exchanges.isEmpty() && !session.hasHeads();

    final List<Entry> added = new ArrayList<>();
    final List<CompletableFuture<JoinResult>> joins = new ArrayList<>();
    final Alarm alarm = new Alarm(session);
    long quietSince = clock.millis();
    // Due at once (not Long.MIN_VALUE: now - MIN_VALUE overflows and would never be due).
    long lastResume = quietSince - config.resumeEvery().toMillis();
    int lastSize = log.size();
    long lastJoinStart = Long.MIN_VALUE / 2;
    try {
      while (true) {
        // Events from here on end the wait below: none is lost between a look and the wait.
        final long seen = session.events();
        if (context.cancelled() || Thread.currentThread().isInterrupted()) {
          throw new InterruptedException("sync of " + session.address() + " cancelled");
        }
        final boolean hold = running(joins)
            && clock.millis() - lastJoinStart < JOIN_HOLD_MILLIS;
        if (session.hasDial()) {
          // A peer queued while this sync runs (a re-dial that connected): ask it too.
          exchanges.addAll(exchangesWith(session.takeDial(), session, acSession,
              exchanges.size()));
        }
        final List<byte[]> heads = hold ? List.of() : session.takeHeads();
        if (heads.size() == 1) {
          joins.add(wakes(session, replica.joinBlock(heads.get(0))));
          lastJoinStart = clock.millis();
        } else if (!heads.isEmpty()) {
          // Heads that queued up while a join ran: one join, one barrier and one commit for all.
          counter.accept("heads-joined-together");
          joins.add(wakes(session, replica.joinBlocks(heads)));
          lastJoinStart = clock.millis();
        }
        final long now = clock.millis();
        if (!log.isComplete() && joins.isEmpty()
            && now - lastResume >= config.resumeEvery().toMillis()) {
          lastResume = now;
          joins.add(wakes(session, replica.resume()));
        }
        final int size = log.size();
        if (!heads.isEmpty() || size != lastSize) {
          // Heads arriving or the log growing (a long history being fetched) is progress.
          quietSince = now;
          lastSize = size;
        }
        final boolean joinsDone = collect(joins, added);
        final boolean exchangesDone = exchanges.stream().allMatch(CompletableFuture::isDone);
        final boolean quiet = now - quietSince >= config.quietPeriod().toMillis();
        // Every peer asked has answered (joinsDone, exchangesDone) and nothing it sent was new,
        // and no re-dial can still bring a peer that has something. A log with no entry yet (a
        // database just followed) still waits for the window: a peer may not have spoken yet.
        final boolean nothingNew = added.isEmpty() && size > 0 && !session.redialing();
        if (joinsDone && exchangesDone && log.isComplete() && !session.hasHeads()
            && (nothingNew
                || quiet && (!added.isEmpty() || now >= windowEnd || nothingToAwait))) {
          break;
        }
        if (now >= giveUp && joinsDone && log.isComplete()) {
          // Never quiet, yet complete: entries kept arriving (a writer's long burst on a busy
          // machine) or a peer kept the sync waiting for the whole time. The log is complete as
          // far as the heads known, which is what a sync promises: it ends as a success (and is
          // recorded), not as an incomplete log. Heads still queued go to the next sync.
          counter.accept("syncs-ended-unquiet");
          break;
        }
        if (now >= giveUp) {
          counter.accept("syncs-incomplete");
          throw new IncompleteLogException(session.address() + " is still missing "
              + log.missing().size() + " blocks (" + (log.isWalkingHistory()
              ? "its history is walked" : log.incompleteCount() + " entries wait for them")
              + ") after " + (now - start) + " ms");
        }
        // The next time a decision may change without an event; all but giving up are looked
        // at only while still ahead.
        long next = giveUp;
        if (hold && session.hasHeads()) {
          // Heads wait for the running join: they get one of their own at the latest then.
          next = Math.min(next, lastJoinStart + JOIN_HOLD_MILLIS);
        }
        if (!log.isComplete() && joins.isEmpty()) {
          next = Math.min(next, lastResume + config.resumeEvery().toMillis());
        }
        final long quietEnd = quietSince + config.quietPeriod().toMillis();
        if (quietEnd > now) {
          next = Math.min(next, quietEnd);
        }
        if (windowEnd > now) {
          next = Math.min(next, windowEnd);
        }
        next = Math.min(next, ownedUntil.getAsLong());
        final long later = clock.millis();
        if (next <= later) {
          // Due already: decide again now.
          continue;
        }
        alarm.at(next, later);
        session.awaitEvent(seen);
      }
    } finally {
      alarm.cancel();
    }
    replica.accessControllerDatabase().ifPresent(acDb -> {
      if (!acDb.log().isComplete()) {
        acDb.resume();
      }
    });

    final boolean receivedUpdate = !added.isEmpty();
    // A fallback scan reads the whole log: done after a takeover or a store outage, when the
    // session says one is due (its first sync, the first after a failed or follower sync, or
    // pins failed a while ago), and for an explicit sync when pins failed or the session does
    // not keep what the last scan found; an explicit sync otherwise answers from that. So a
    // topic message, a subscription or an explicit sync never costs a walk of the history.
    final SyncTrigger trigger = context.trigger();
    final MediaPath.ScanNeed need;
    if (trigger == SyncTrigger.TAKEOVER || trigger == SyncTrigger.RETRY
        || session.scanDue(clock.millis())
        || trigger == SyncTrigger.HTTP && session.pinsFailed()) {
      need = MediaPath.ScanNeed.DUE;
    } else if (trigger == SyncTrigger.HTTP) {
      need = MediaPath.ScanNeed.ASKED;
    } else {
      need = MediaPath.ScanNeed.NONE;
    }
    final MediaPath.Named named = media.afterSync(session, replica, added, need);
    if (named.walked()) {
      session.scanned(clock.millis());
    }
    final List<String> extracted = new ArrayList<>(named.cids().size());
    for (final Cid cid : named.cids()) {
      extracted.add(cid.toString());
    }
    LOG.debug("sync of {}: {} new entries, {} in all, {} media", session.address(),
        added.size(), log.size(), named.cids().size());
    // Pins are reported through the media path as they finish (the one "pinned" route).
    return new SyncResult(session.address().toString(), log.size(), added.size(),
        log.heads().size(), receivedUpdate, named.scanned(), extracted);
  }

  /** Heads exchanges with the peers to dial, for the database and its controller's database. */
  List<CompletableFuture<?>> dial(final SyncContext context,
      final DatabaseSession session, final DatabaseSession acSession) {
    final Set<PeerId> toDial = new LinkedHashSet<>(session.takeDial());
    if (context.trigger() != SyncTrigger.MESSAGE) {
      toDial.addAll(network.topicPeers(session.address().topic()));
      if (acSession != null) {
        toDial.addAll(network.topicPeers(acSession.address().topic()));
      }
    }
    return exchangesWith(toDial, session, acSession, 0);
  }

  /**
   * Heads exchanges with the connected ones of {@code peers}, for the database and its
   * controller's database, while this sync's {@code dialled} plus the new ones stay within
   * {@link #MAX_DIALS_PER_SYNC}.
   */
  private List<CompletableFuture<?>> exchangesWith(final Collection<PeerId> peers,
      final DatabaseSession session, final DatabaseSession acSession, final int dialled) {
    final List<CompletableFuture<?>> exchanges = new ArrayList<>();
    for (final PeerId peer : peers) {
      if (dialled + exchanges.size() >= MAX_DIALS_PER_SYNC) {
        break;
      }
      if (network.isConnected(peer)) {
        exchanges.add(exchange(peer, session));
        if (acSession != null) {
          exchanges.add(exchange(peer, acSession));
        }
      }
    }
    // An answered exchange wakes the sync at once: "nothing new" needs no poll to be seen.
    exchanges.forEach(exchange -> exchange.whenComplete((ignored, error) -> session.wake()));
    return exchanges;
  }

  private CompletableFuture<?> exchange(final PeerId peer, final DatabaseSession session) {
    return network.exchangeHeads(peer, session.address(), endpoints.apply(session))
        .orTimeout(config.dialTimeout().toMillis(), TimeUnit.MILLISECONDS)
        .handle((result, error) -> {
          counter.accept(error == null ? "exchanges-dialled" : "exchanges-failed");
          if (error != null && Failures.isFatal(error)) {
            LOG.error("{}: heads exchange with {} failed", session.address(), peer, error);
          } else if (error != null) {
            LOG.debug("{}: heads exchange with {} failed: {}", session.address(), peer,
                error.toString());
          }
          return null;
        });
  }

  private static boolean running(final List<CompletableFuture<JoinResult>> joins) {
    for (final CompletableFuture<JoinResult> join : joins) {
      if (!join.isDone()) {
        return true;
      }
    }
    return false;
  }

  /** {@code join}, which wakes the sync waiting on {@code session} when it ends, however. */
  private static CompletableFuture<JoinResult> wakes(final DatabaseSession session,
      final CompletableFuture<JoinResult> join) {
    join.whenComplete((result, error) -> session.wake());
    return join;
  }

  /**
   * The sync's one pending wake-up on the {@link SyncEngine.Timer}: at the next deadline it
   * wakes the session like any other event. Used by the sync's thread only; a wake-up still
   * pending for the same time is kept, one that fired or is for another time is replaced.
   */
  private final class Alarm {
    private final DatabaseSession session;
    private long due = Long.MIN_VALUE;
    private AtomicBoolean pending = new AtomicBoolean();
    private Runnable cancel = () -> { };

    Alarm(final DatabaseSession session) {
      this.session = session;
    }

    /** Wakes the session at {@code when} (clock millis, after {@code now}). */
    void at(final long when, final long now) {
      if (when == due && pending.get()) {
        return;
      }
      cancel.run();
      final AtomicBoolean armed = new AtomicBoolean(true);
      pending = armed;
      due = when;
      cancel = timer.schedule(() -> {
        armed.set(false);
        session.wake();
      }, Duration.ofMillis(when - now));
    }

    void cancel() {
      cancel.run();
      pending.set(false);
    }
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
        counter.accept("joins-failed");
        continue;
      }
      added.addAll(join.join().added());
    }
    return allDone;
  }
}
