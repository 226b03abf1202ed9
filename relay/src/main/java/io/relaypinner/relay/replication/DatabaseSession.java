package io.relaypinner.relay.replication;

import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.PeerId;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.orbitdb.log.Entry;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Deque;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * What the relay holds for one followed database between and during its syncs: the inbox of heads
 * that arrived (pubsub messages, heads exchanges), bounded in bytes per database and in total
 * ({@link InboxBudget}); the peers seen on its topic (re-dialled by an explicit sync) and those
 * to dial at the next sync; and its {@link MediaLedger}. The sync loop ({@link DatabaseSync})
 * drains it, and waits on it for the next event ({@link #awaitEvent}). Thread-safe; offers come
 * from event loops and never block.
 */
final class DatabaseSession {
  /** Peers remembered per database for reconnection on an explicit sync. */
  static final int MAX_SEEN_PEERS = 64;
  /** How soon failed media pins make a sync with nothing new scan the log again. */
  static final long SCAN_AGAIN_AFTER_MILLIS = 10 * 60_000L;

  private final OrbitDbAddress address;
  private final InboxBudget budget;
  private final MediaLedger ledger;
  private final CountBudget peers;
  private final CountBudget namedBudget;
  /**
   * The media CIDs the log names (at most {@link MediaPath#MAX_NAMED}), as the last fallback scan
   * found them and the joins since added to them, and the number of entries the log had then;
   * null when not known (no scan yet, a store failed, the budget was spent). Guarded by this.
   */
  private Set<Cid> named;
  private long namedEntries;
  private final java.util.concurrent.atomic.AtomicReference<String> rescan =
      new java.util.concurrent.atomic.AtomicReference<>();
  /** When the last fallback scan ran (clock millis); none yet. Guarded by this. */
  private long lastScanMillis = Long.MIN_VALUE;
  /** A media pin failed since the last scan. */
  private volatile boolean pinsFailed;
  private final Deque<byte[]> heads = new ArrayDeque<>();
  private final Set<PeerId> dial = new LinkedHashSet<>();
  private final Set<PeerId> seen = new LinkedHashSet<>();
  private long bytes;
  private int redialing;
  private boolean closed;
  /** Events a running sync may decide on, counted so that none is missed. Guarded by this. */
  private long events;

  /** A session whose media ledger, remembered peers and named media have budgets of their own. */
  DatabaseSession(final OrbitDbAddress address, final InboxBudget budget) {
    this(address, budget, CountBudget.media(), CountBudget.peers(), CountBudget.named());
  }

  /**
   * @param media the budget every database's media ledger shares
   * @param peers the budget of remembered peers (seen, and to dial) every session shares
   * @param named the budget of the media every session keeps of its log ({@link #named})
   */
  DatabaseSession(final OrbitDbAddress address, final InboxBudget budget,
      final CountBudget media, final CountBudget peers, final CountBudget named) {
    this.address = Objects.requireNonNull(address, "address");
    this.budget = Objects.requireNonNull(budget, "budget");
    this.ledger = new MediaLedger(media);
    this.peers = Objects.requireNonNull(peers, "peers");
    this.namedBudget = Objects.requireNonNull(named, "named");
  }

  OrbitDbAddress address() {
    return address;
  }

  /**
   * A shared store failed while this database's entries were being pinned: the next sync scans
   * the whole log again (what the failure skipped is pinned then).
   */
  void storeFailed(final String store) {
    rescan.set(store);
    synchronized (this) {
      forgetNamed();
    }
  }

  /** A media pin of this database failed: a later scan queues it again ({@link #scanDue}). */
  void pinFailed() {
    pinsFailed = true;
  }

  /**
   * Whether a sync with nothing new should scan the whole log anyway: its first sync (what a
   * restart or an earlier session left unpinned), the first after a failed or follower sync
   * ({@link #scanNext}), or pins failed and the last scan is at least
   * {@link #SCAN_AGAIN_AFTER_MILLIS} old. So a peer that keeps sending messages or subscribing
   * cannot make the relay walk a long history more often than that.
   */
  synchronized boolean scanDue(final long nowMillis) {
    return lastScanMillis == Long.MIN_VALUE
        || pinsFailed && nowMillis - lastScanMillis >= SCAN_AGAIN_AFTER_MILLIS;
  }

  /**
   * The next sync scans the whole log even with nothing new: one failed, or ran as a follower,
   * and may have left pins undone.
   */
  synchronized void scanNext() {
    lastScanMillis = Long.MIN_VALUE;
    forgetNamed();
  }

  /** A fallback scan of the whole log ran at {@code nowMillis}. */
  synchronized void scanned(final long nowMillis) {
    lastScanMillis = nowMillis;
    pinsFailed = false;
  }

  /**
   * A fallback scan of the log of {@code entries} entries found {@code media}: kept, within the
   * sessions' budget, for the explicit syncs that follow ({@link #named(long)}). Returns false
   * when the budget had no room for them (nothing is kept).
   */
  synchronized boolean scannedMedia(final Set<Cid> media, final long entries) {
    forgetNamed();
    if (closed) {
      return true;
    }
    if (media.size() > MediaPath.MAX_NAMED || !namedBudget.reserve(media.size())) {
      return false;
    }
    named = new LinkedHashSet<>(media);
    namedEntries = entries;
    return true;
  }

  /**
   * A join added {@code entries} entries naming {@code media}: the kept media (if any) follow
   * the log. A CID beyond {@link MediaPath#MAX_NAMED} is not listed, as a scan would not list it;
   * one the budget has no room for makes the kept media unknown (returns false).
   */
  synchronized boolean joinedMedia(final Collection<Cid> media, final int entries) {
    if (named == null) {
      return true;
    }
    namedEntries += entries;
    for (final Cid cid : media) {
      if (named.size() >= MediaPath.MAX_NAMED || named.contains(cid)) {
        continue;
      }
      if (!namedBudget.reserve(1)) {
        forgetNamed();
        return false;
      }
      named.add(cid);
    }
    return true;
  }

  /**
   * The media the log names when it has {@code entries} entries, as kept since the last scan;
   * null when not kept, or when entries came by another path than this session's joins (the
   * counts differ).
   */
  synchronized Set<Cid> named(final long entries) {
    return named == null || namedEntries != entries ? null : new LinkedHashSet<>(named);
  }

  private void forgetNamed() {
    if (named != null) {
      namedBudget.release(named.size());
      named = null;
    }
  }

  /** Whether a media pin failed since the last scan (a scan queues it again). */
  boolean pinsFailed() {
    return pinsFailed;
  }

  /** The store that failed since the last call, or null (and forgets it). */
  String takeStoreFailed() {
    return rescan.getAndSet(null);
  }

  MediaLedger ledger() {
    return ledger;
  }

  /** What happened to an offered head. */
  enum Offer { QUEUED, QUEUED_DROPPING_OLDEST, DROPPED_OVERSIZED, DROPPED_FULL }

  /**
   * Queues a head's block for the next join. A block larger than an entry can be is dropped at
   * once; when this database's share is spent the oldest heads make room (a newer head usually
   * names the older ones); when the total is spent the new one is dropped.
   */
  synchronized Offer offer(final byte[] block) {
    if (block.length > Entry.MAX_BLOCK_SIZE) {
      return Offer.DROPPED_OVERSIZED;
    }
    if (closed) {
      return Offer.DROPPED_FULL;
    }
    boolean droppedOldest = false;
    while (bytes + block.length > budget.perDatabase() && !heads.isEmpty()) {
      final byte[] oldest = heads.pollFirst();
      bytes -= oldest.length;
      budget.release(oldest.length);
      droppedOldest = true;
    }
    if (!budget.reserve(block.length)) {
      return Offer.DROPPED_FULL;
    }
    heads.addLast(block.clone());
    bytes += block.length;
    signal();
    return droppedOldest ? Offer.QUEUED_DROPPING_OLDEST : Offer.QUEUED;
  }

  /** Takes every queued head. */
  synchronized List<byte[]> takeHeads() {
    final List<byte[]> out = new ArrayList<>(heads);
    heads.clear();
    budget.release(bytes);
    bytes = 0;
    return out;
  }

  /** Whether heads are queued. */
  synchronized boolean hasHeads() {
    return !heads.isEmpty();
  }

  /**
   * The events so far: a sync reads it before it looks at the session and its joins, then
   * {@link #awaitEvent waits} for one after it.
   */
  synchronized long events() {
    return events;
  }

  /**
   * Waits for an event after the {@code seen}-th: a head offered, a peer queued to dial, a
   * re-dial that ended, the session closed, or a {@link #wake}. Returns at once when one came
   * since; a spurious return only makes the sync look again.
   */
  synchronized void awaitEvent(final long seen) throws InterruptedException {
    if (events == seen) {
      wait();
    }
  }

  private void signal() {
    events++;
    notifyAll();
  }

  /**
   * A peer is on this database's topic (subscribed, or sent heads); {@code dialNext}: dial it.
   * Returns false when it could not be remembered: the sessions' shared budget of peers is spent
   * and this session holds none to make room with.
   */
  synchronized boolean sawPeer(final PeerId peer, final boolean dialNext) {
    boolean remembered = remember(seen, peer);
    if (dialNext) {
      remembered &= remember(dial, peer);
      // A running sync dials it too.
      signal();
    }
    return remembered;
  }

  /**
   * Adds {@code peer} to {@code set} as its newest member: the set's oldest makes room when it
   * holds {@link #MAX_SEEN_PEERS} or the shared budget is spent.
   */
  private boolean remember(final Set<PeerId> set, final PeerId peer) {
    return !closed && peers.addNewest(set, peer, MAX_SEEN_PEERS);
  }

  synchronized List<PeerId> takeDial() {
    final List<PeerId> out = new ArrayList<>(dial);
    peers.release(dial.size());
    dial.clear();
    return out;
  }

  /**
   * Wakes a sync waiting in {@link #awaitEvent}: something it waits for besides the session
   * happened (a join or a heads exchange ended, a deadline came).
   */
  synchronized void wake() {
    signal();
  }

  /** Whether peers are queued to be dialled. */
  synchronized boolean hasDial() {
    return !dial.isEmpty();
  }

  /** An explicit sync is re-dialling a peer seen on the topic; {@link #redialEnded} follows. */
  synchronized void redialStarted() {
    redialing++;
  }

  /** A re-dial ended, connected or not (a connected peer was queued to dial first). */
  synchronized void redialEnded() {
    redialing--;
    signal();
  }

  /** Whether a re-dial is still running: a sync waits for it before it says nothing is new. */
  synchronized boolean redialing() {
    return redialing > 0;
  }

  synchronized List<PeerId> seenPeers() {
    return new ArrayList<>(seen);
  }

  synchronized long inboxBytes() {
    return bytes;
  }

  /** Releases the inbox's bytes and the media ledger's CIDs; later offers are dropped. */
  synchronized void close() {
    if (!closed) {
      peers.release(seen.size() + dial.size());
      seen.clear();
      dial.clear();
      forgetNamed();
    }
    closed = true;
    ledger.close();
    takeHeads();
    signal();
  }
}
