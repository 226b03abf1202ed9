package io.relaypinner.relay.replication;

import io.relaypinner.ipfs.blockstore.StoreUnavailableException;
import io.relaypinner.ipfs.pin.PinHolder;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.orbitdb.OrbitDbReplica;
import io.relaypinner.orbitdb.log.Entry;
import io.relaypinner.orbitdb.log.JoinResult;
import io.relaypinner.orbitdb.log.OrbitDbLog;
import io.relaypinner.relay.storage.PinHolders;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * The one path from a verified entry to a media CID reported pinned: after every join of a
 * database, its new entries are pinned ({@link ReplicatedBlocks}), the media their payloads name
 * is extracted once and its pin started at once ({@link MediaPinQueue}, shared and deduplicated);
 * the database's {@link MediaLedger} makes that media eligible when the entry is complete in
 * this database's log; and a CID that is eligible and pinned is reported once per database to
 * the sync engine ({@code reporter}), the only route by which "pinned" reaches it.
 *
 * <p>Invariant: media reported for a database implies that an entry of that database naming it
 * and that entry's whole history are verified and stored here.
 */
final class MediaPath {
  /**
   * Media CIDs one sync names at most (its {@code extractedMediaCids}): every CID is still
   * pinned, the list only stops growing.
   */
  static final int MAX_NAMED = 10_000;

  private final MediaCidExtractor extractor;
  private final MediaPinQueue pinQueue;
  private final ReplicatedBlocks blocks;
  private final BiConsumer<DatabaseSession, Cid> reporter;
  private final Consumer<String> counter;

  /**
   * @param reporter told once per (database, media CID) that it is pinned and eligible
   */
  MediaPath(final MediaCidExtractor extractor, final MediaPinQueue pinQueue,
      final ReplicatedBlocks blocks, final BiConsumer<DatabaseSession, Cid> reporter,
      final Consumer<String> counter) {
    this.extractor = Objects.requireNonNull(extractor, "extractor");
    this.pinQueue = Objects.requireNonNull(pinQueue, "pinQueue");
    this.blocks = Objects.requireNonNull(blocks, "blocks");
    this.reporter = Objects.requireNonNull(reporter, "reporter");
    this.counter = Objects.requireNonNull(counter, "counter");
  }

  /** A database's replica opened: its manifest and controller blocks are pinned. */
  void databaseOpened(final OrbitDbReplica replica) {
    blocks.databaseOpened(replica);
  }

  /**
   * The media a sync names, whether they are the whole log's ({@code scanned}: a fallback scan,
   * or what the last one found kept current since), and whether the log was read for them
   * ({@code walked}: a scan ran).
   */
  record Named(Set<Cid> cids, boolean scanned, boolean walked) { }

  /** What a sync with nothing new wants of the log's media. */
  enum ScanNeed {
    /** Nothing: no work that grows with the log (a topic message, a subscription, a resume). */
    NONE,
    /**
     * The log's media (an explicit sync): what the last scan found, kept current by the joins
     * since, when the session has it; else a scan.
     */
    ASKED,
    /**
     * A scan of the whole log, whatever is kept: one is due ({@link DatabaseSession#scanDue}),
     * media pins failed, a takeover, a store retry. It also queues again every pin a failure
     * may have skipped.
     */
    DUE
  }

  /**
   * The media of the sync that just ended: those named by its new entries; or the log's when a
   * store failed during the sync or no update arrived and {@code need} asks for them, from a
   * fallback scan of the whole log (a store that fails during the scan fails the sync, which is
   * retried) or, for an explicit sync, what the last scan found, kept current; else none.
   */
  Named afterSync(final DatabaseSession session, final OrbitDbReplica replica,
      final List<Entry> added, final ScanNeed need) {
    final String storeFailed = session.takeStoreFailed();
    if (!added.isEmpty() && storeFailed == null) {
      return new Named(named(added), false, false);
    }
    if (storeFailed == null && need == ScanNeed.NONE) {
      return new Named(Set.of(), false, false);
    }
    if (storeFailed == null && need == ScanNeed.ASKED) {
      final Set<Cid> kept = session.named(replica.log().size());
      if (kept != null) {
        counter.accept("fallback-scans-kept");
        return new Named(kept, true, false);
      }
    }
    counter.accept("fallback-scans");
    final long entries = replica.log().size();
    final Set<Cid> named = scan(session, replica);
    final String failed = session.takeStoreFailed();
    if (failed != null) {
      throw new StoreUnavailableException(failed, "pins of " + session.address()
          + " failed during the scan; the sync is retried", null);
    }
    if (!session.scannedMedia(named, entries)) {
      counter.accept("bound.media-kept");
    }
    return new Named(named, true, true);
  }

  /** A join of {@code session}'s database ended (on the replication executor). */
  void onJoin(final DatabaseSession session, final OrbitDbReplica replica,
      final JoinResult result) {
    final List<Cid> eligible = new ArrayList<>();
    if (!session.joinedMedia(entries(session, replica.log(), result.added(), eligible),
        result.added().size())) {
      counter.accept("bound.media-kept");
    }
    eligible.addAll(session.ledger().onCompleted(result.completed()));
    release(session, eligible);
    if (result.historyCompleted()) {
      // A history too long to track entry by entry is complete: its entries are not listed,
      // and the ledger could not remember the media of all of them. One pass finds them.
      counter.accept("history-scans");
      scan(session, replica);
    }
  }

  /**
   * Fallback scan (no update arrived during a sync): every entry of the log goes through the
   * same path, so what a restart or a lost pin left behind is pinned and reported. Returns the
   * media CIDs named.
   */
  Set<Cid> scan(final DatabaseSession session, final OrbitDbReplica replica) {
    final List<Cid> eligible = new ArrayList<>();
    final Set<Cid> named = new LinkedHashSet<>();
    final OrbitDbLog log = replica.log();
    // One entry at a time: a pass over a long log holds no more than a page of it.
    log.forEachEntry(entry -> {
      entry(session, log, entry, eligible, named);
      if (eligible.size() >= 1_000) {
        release(session, eligible);
        eligible.clear();
      }
    });
    release(session, eligible);
    return named;
  }

  /** Media named by {@code entries} (no side effects). */
  Set<Cid> named(final Collection<Entry> entries) {
    final Set<Cid> out = new LinkedHashSet<>();
    for (final Entry entry : entries) {
      out.addAll(extractor.extract(entry.payload()).cids());
    }
    return out;
  }

  private Set<Cid> entries(final DatabaseSession session, final OrbitDbLog log,
      final Collection<Entry> entries, final List<Cid> eligible) {
    final Set<Cid> named = new LinkedHashSet<>();
    for (final Entry entry : entries) {
      entry(session, log, entry, eligible, named);
    }
    return named;
  }

  /**
   * One verified entry: pinned, its media extracted and their pins started, the media eligible
   * now added to {@code eligible}, and up to {@link #MAX_NAMED} media CIDs to {@code named}.
   */
  private void entry(final DatabaseSession session, final OrbitDbLog log, final Entry entry,
      final List<Cid> eligible, final Set<Cid> named) {
    final MediaCidExtractor.Result found = extractor.extract(entry.payload());
    if (found.invalid() > 0) {
      counter.accept("media-invalid-cids");
    }
    final PinHolder holder = PinHolders.replication(session.address());
    try {
      blocks.entryAdded(holder, entry, found.cids());
    } catch (final StoreUnavailableException e) {
      // Not pinned now: a later sync of this database scans its log again.
      session.storeFailed(e.store());
    }
    if (found.cids().isEmpty()) {
      return;
    }
    for (final Cid cid : found.cids()) {
      if (named.size() >= MAX_NAMED) {
        counter.accept("bound.media-named");
        break;
      }
      named.add(cid);
    }
    final List<Cid> now = session.ledger().onEntry(entry.cid(), found.cids(),
        () -> log.isComplete(entry.cid()));
    if (now == null) {
      counter.accept("bound.media-awaiting");
    } else {
      eligible.addAll(now);
    }
    for (final Cid media : found.cids()) {
      // Fetch at once, whether or not the history is complete: reporting waits, not pinning.
      counter.accept("media-queued");
      pinQueue.pin(media, holder).whenComplete((done, error) -> {
        if (error == null) {
          blocks.mediaPinned(done);
        } else {
          // A later sync scans the log again, which queues the pin again.
          session.pinFailed();
        }
      });
    }
  }

  private void release(final DatabaseSession session, final List<Cid> eligible) {
    if (eligible.isEmpty()) {
      return;
    }
    final PinHolder holder = PinHolders.replication(session.address());
    for (final Cid media : eligible) {
      pinQueue.pin(media, holder).thenAccept(done -> {
        if (session.ledger().report(done)) {
          reporter.accept(session, done);
        }
      });
    }
  }
}
