package io.relaypinner.orbitdb.log;

import static io.relaypinner.common.Failures.unwrap;

import io.relaypinner.ipfs.blockstore.StoreUnavailableException;
import io.relaypinner.ipfs.dagcbor.DagCbor;
import io.relaypinner.libp2p.core.BadPeerException;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.orbitdb.EntryRejectedException;
import io.relaypinner.orbitdb.RejectReason;
import io.relaypinner.orbitdb.identity.Identity;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One walk of a log from some heads (or from its frontier: {@link OrbitDbLog#resume()}); single
 * use. It fetches each block (read from the blockstore when held), decodes and verifies it on
 * the log's executor, stages the verified entry and identity blocks, links the entry into the
 * log's {@link LogGraph} and follows its parents, at most {@link LogConfig#maxConcurrentFetches()}
 * at once and within the join's limits of entries and depth. A block that cannot be fetched or
 * stored, or that a bound refuses, stays on the {@link Frontier} with its back-off; a refused
 * block is remembered by the node's {@link LogMemory}. When no step is left, the join writes the
 * log's state ({@link OrbitDbLog}, "Durability") and completes with its {@link JoinResult}.
 *
 * <p>Its own state is guarded by itself; the log's by the log's lock, always taken inside this
 * one's, never the other way round.
 */
final class Join {
  // The log's own category: operators configure the log's logging by that name.
  private static final Logger LOG = LoggerFactory.getLogger(OrbitDbLog.class);

  private final OrbitDbLog log;
  private final Object lock;
  private final LogGraph graph;
  private final Frontier frontier;
  private final Deque<Item> queue = new ArrayDeque<>();
  private final Set<Cid> seen = new HashSet<>();
  private final List<Entry> added = new ArrayList<>();
  private final List<Cid> completed = new ArrayList<>();
  private final Map<RejectReason, Integer> rejected = new EnumMap<>(RejectReason.class);
  private final List<Cid> unavailable = new ArrayList<>();
  private final CompletableFuture<JoinResult> result = new CompletableFuture<>();
  private int inFlight;
  private int processed;
  private boolean truncated;

  private record Item(Cid cid, Entry entry, int depth) {}

  Join(final OrbitDbLog log) {
    this.log = log;
    this.lock = log.lock;
    this.graph = log.graph;
    this.frontier = log.graph.frontier();
  }

  synchronized void enqueue(final Cid cid, final int depth) {
    if (seen.add(cid)) {
      queue.add(new Item(cid, null, depth));
    }
  }

  synchronized void enqueueDecoded(final Entry entry, final int depth) {
    if (seen.add(entry.cid())) {
      queue.add(new Item(entry.cid(), entry, depth));
    }
  }

  synchronized void reject(final Cid cid, final RejectReason reason) {
    rejected.merge(reason, 1, Integer::sum);
    log.counters.count("rejected." + reason.label());
    if (cid != null && reason != RejectReason.IDENTITY_UNAVAILABLE) {
      log.memory.rejected(cid);
      final List<Cid> done = new ArrayList<>();
      synchronized (lock) {
        // A refused block resolves the entries waiting on it: nothing more can come.
        graph.refused(cid, done);
      }
      completed.addAll(done);
    }
  }

  /**
   * Starts the join.
   *
   * @param fromFrontier also fetch the frontier's blocks whose back-off has passed
   */
  CompletableFuture<JoinResult> start(final boolean fromFrontier) {
    if (fromFrontier) {
      final long now = log.clock.millis();
      final Frontier.Due due;
      synchronized (lock) {
        due = frontier.due(now);
      }
      for (final Cid cid : due.due()) {
        enqueue(cid, 0);
      }
      if (due.deferred() > 0) {
        log.counters.count("deferred", due.deferred());
      }
    }
    pump();
    return result;
  }

  private void pump() {
    final List<Item> toStart = new ArrayList<>();
    boolean finished = false;
    synchronized (this) {
      while (inFlight < log.config.maxConcurrentFetches() && !queue.isEmpty()) {
        final Item item = queue.poll();
        if (log.memory.isRejected(item.cid())) {
          continue;
        }
        if (processed >= log.config.maxEntriesPerJoin() || item.depth() > log.config.maxDepth()) {
          truncated = true;
          queue.addFirst(item);
          break;
        }
        synchronized (lock) {
          final boolean verified;
          try {
            verified = graph.isVerified(item.cid());
          } catch (final StoreUnavailableException e) {
            // The datastore is down: the block stays on the frontier, tried again later.
            storeDown(item.cid(), e);
            continue;
          }
          if (verified) {
            log.counters.count("duplicate");
            continue;
          }
          if (!log.processing.add(item.cid())) {
            // Another join has it; it follows its links too.
            continue;
          }
        }
        processed++;
        inFlight++;
        toStart.add(item);
      }
      if (inFlight == 0 && toStart.isEmpty()) {
        finished = true;
      }
    }
    for (final Item item : toStart) {
      process(item).whenComplete((ignored, error) -> {
        if (error != null) {
          LOG.warn("{}: join step for {} failed", log.address(), item.cid(), error);
        }
        synchronized (lock) {
          log.processing.remove(item.cid());
        }
        synchronized (this) {
          inFlight--;
        }
        pump();
      });
    }
    if (finished) {
      finish();
    }
  }

  private CompletableFuture<Void> process(final Item item) {
    final CompletableFuture<Entry> entry;
    if (item.entry() != null) {
      entry = CompletableFuture.completedFuture(item.entry());
    } else {
      entry = bytes(item.cid()).thenApplyAsync(bytes -> Entry.decode(item.cid(), bytes),
          log.executor);
    }
    final CompletableFuture<Object[]> verified = entry.thenCompose(e -> log.verifier().verify(e)
        .thenApply(identity -> new Object[] {e, identity}));
    return verified.handle((pair, error) -> {
      if (error == null) {
        try {
          accept((Entry) pair[0], (Identity) pair[1], item.depth());
          return null;
        } catch (final StoreUnavailableException e) {
          storeDown(item.cid(), e);
          return null;
        }
      }
      final Throwable cause = unwrap(error);
      if (cause instanceof StoreUnavailableException down) {
        storeDown(item.cid(), down);
        return null;
      }
      if (cause instanceof EntryRejectedException rejection
          && rejection.reason() != RejectReason.IDENTITY_UNAVAILABLE) {
        LOG.debug("{}: rejected {}: {}", log.address(), item.cid(), rejection.getMessage());
        reject(item.cid(), rejection.reason());
      } else if (cause instanceof BadPeerException) {
        LOG.debug("{}: malformed {}: {}", log.address(), item.cid(), cause.getMessage());
        reject(item.cid(), RejectReason.MALFORMED_ENTRY);
      } else {
        LOG.debug("{}: could not fetch {}: {}", log.address(), item.cid(), cause.toString());
        failed(item.cid(), "unavailable");
      }
      return null;
    });
  }

  /**
   * {@code cid} could not be fetched, or a bound refused it (counted by the caller as
   * {@code counter}, null when counted already): it stays on the frontier, its back-off grown.
   */
  private void failed(final Cid cid, final String counter) {
    synchronized (this) {
      unavailable.add(cid);
    }
    if (counter != null) {
      log.counters.count(counter);
    }
    final long now = log.clock.millis();
    synchronized (lock) {
      frontier.failed(cid, now);
    }
  }

  /**
   * A store (block or data) could not be reached for {@code cid}: it stays on the frontier and
   * is tried again after {@link Frontier#RETRY_MIN}, without growing its back-off (the peer is
   * not at fault); the store logs its outage once.
   */
  private void storeDown(final Cid cid, final StoreUnavailableException e) {
    LOG.debug("{}: {} not stored now: {}", log.address(), cid, e.getMessage());
    synchronized (this) {
      unavailable.add(cid);
    }
    log.counters.count("store-unavailable");
    final long now = log.clock.millis();
    synchronized (lock) {
      frontier.storeDown(cid, now);
    }
  }

  private CompletableFuture<byte[]> bytes(final Cid cid) {
    final Optional<byte[]> held;
    try {
      held = log.blockstore.get(cid);
    } catch (final RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    if (held.isPresent()) {
      return CompletableFuture.completedFuture(held.get());
    }
    return log.fetcher.fetch(cid).orTimeout(log.config.fetchTimeout().toMillis(),
        TimeUnit.MILLISECONDS);
  }

  private void accept(final Entry entry, final Identity identity, final int depth) {
    final Cid cid = entry.cid();
    final List<Cid> done = new ArrayList<>();
    final List<Cid> follow = new ArrayList<>();
    final boolean duplicate;
    synchronized (lock) {
      duplicate = graph.isVerified(cid);
    }
    if (duplicate) {
      log.counters.count("duplicate");
      return;
    }
    // Staged before it is linked, and only now: the entry passed every check, the access
    // controller included. Staged blocks are readable at once and made durable by the join's
    // one barrier (persist) before any datastore write names them. A store that fails here
    // (StoreUnavailableException) leaves the entry unlinked, on the frontier: the log never
    // counts or heads an entry it lacks.
    if (!log.blockstore.has(cid)) {
      log.blockstore.stage(cid, entry.block());
    }
    storeIdentity(identity);
    final String refused;
    synchronized (lock) {
      if (graph.isVerified(cid)) {
        refused = "duplicate";
      } else {
        refused = graph.link(entry, done, follow, true, true);
      }
    }
    if (refused != null) {
      log.counters.count(refused);
      if (!refused.equals("duplicate")) {
        // A bound was hit: the entry stays on the frontier and is tried again later.
        failed(cid, null);
      }
      return;
    }
    log.counters.count("accepted");
    if (!done.isEmpty()) {
      log.counters.count("completed", done.size());
    }
    synchronized (this) {
      added.add(entry);
      completed.addAll(done);
      for (final Cid parent : follow) {
        enqueue(parent, depth + 1);
      }
    }
  }

  /** Stages a verified identity's block (re-encoded: dag-cbor is canonical) if not held yet. */
  private void storeIdentity(final Identity identity) {
    if (identity == null || log.blockstore.has(identity.hash())) {
      return;
    }
    final byte[] block = identity.encode();
    if (DagCbor.cid(block).equals(identity.hash())) {
      log.blockstore.stage(identity.hash(), block);
    } else {
      log.counters.count("identity-not-stored");
    }
  }

  private void finish() {
    final Set<Cid> headsNow;
    final boolean complete;
    boolean historyCompleted = false;
    synchronized (this) {
      if (truncated) {
        log.counters.count("truncated");
      }
      synchronized (lock) {
        if (truncated) {
          for (final Item item : queue) {
            if (!frontier.contains(item.cid()) && !graph.isVerified(item.cid())) {
              frontier.add(item.cid(), Frontier.Retry.now());
            }
          }
        }
        if (frontier.endWalkIfDone()) {
          // Every block a verified entry names is verified or refused: all are complete.
          // (An entry another join links after this point is tracked one by one again.)
          historyCompleted = true;
          log.counters.count("histories-completed");
          LOG.info("{}: history of {} entries complete", log.address(), graph.size());
        }
        log.save(!added.isEmpty() || !unavailable.isEmpty() || !rejected.isEmpty()
            || truncated);
        graph.report();
        graph.compact();
        headsNow = Set.copyOf(graph.heads());
        complete = log.isCompleteHeld();
      }
    }
    result.complete(new JoinResult(added, rejected, unavailable, truncated, headsNow,
        completed, complete, historyCompleted));
  }
}
