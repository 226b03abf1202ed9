package io.relaypinner.ipfs.bitswap;

import io.relaypinner.ipfs.bitswap.BitswapFrame.Block;
import io.relaypinner.ipfs.bitswap.BitswapFrame.Presence;
import io.relaypinner.ipfs.bitswap.BitswapFrame.Want;
import io.relaypinner.ipfs.bitswap.BitswapFrame.WantType;
import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multihash;
import io.relaypinner.multiformats.PeerId;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The state of Bitswap 1.2.0 (ipfs/specs src/bitswap-protocol.md) without Netty: per-peer
 * ledgers, the turn scheduler of the server, and our own wants ({@link WantManager}). Time comes
 * from the injected {@link Clock}; I/O goes through {@link Output} and comes back through the
 * methods named there. Not thread-safe: one thread (the {@link Bitswap} adapter's event loop)
 * makes every call; {@link #stats()}, {@link #peerCount()} may be read from any thread.
 *
 * <p><b>Ledger.</b> Each peer's wantlist holds at most {@link BitswapConfig#maxWantsPerPeer()}
 * entries (more are ignored and counted {@code wantlist-full}). WANT-BLOCK is answered with the
 * block, or DONT_HAVE when asked and we lack it (once per want); WANT-HAVE with HAVE, or the block
 * when it is at most {@link BitswapConfig#maxSizeReplaceHaveWithBlock()} bytes. An unsatisfied
 * want stays and is served when the block arrives ({@link #blockAdded} or our own fetch). Cancel
 * removes a want, a full wantlist replaces the old one, WANT-BLOCK wins over WANT-HAVE, and within
 * a turn higher priorities are read first.
 *
 * <p><b>Turns.</b> Peers with wants to look at are served by {@link DeficitRoundRobin} with a
 * quantum of {@link BitswapConfig#bytesPerTurn()} block bytes: one peer asking for 100 large
 * blocks gets a quantum per round like everybody else, so a peer asking for one small block is
 * served within one round. A turn ({@link Turn}) is read off the engine's thread ({@link
 * Turn#load}), at most {@link BitswapConfig#maxConcurrentLoads()} at once; a peer whose stream
 * cannot take more ({@link Output#canSend}) waits for {@link #drained}.
 *
 * <p><b>Served blocks are never lost.</b> A served want leaves the ledger only when the message
 * carrying its block (or HAVE) is written ({@link #sent}); a message dropped or failed puts it
 * back ({@link #unsent}): looked at again at once, or, when no stream could be opened, on the
 * peer's next message.
 *
 * <p><b>Our wants.</b> Wants for a peer are sent in batches ({@link #flush}); while the peer still
 * owes us blocks we asked it for, new wants and cancels are held (at most 1 s): a message to a
 * busy Helia 5 makes it send its whole queue again.
 */
public final class BitswapEngine {
  private static final Logger LOG = LoggerFactory.getLogger(BitswapEngine.class);
  /** Wants named per message when sending a peer our wants. */
  private static final int WANTS_PER_MESSAGE = 1_000;
  /** Wants one turn looks at (the turn stops earlier at its byte budget). */
  static final int WANTS_PER_TURN = 512;
  /** Longest our wants to a peer wait while it is still sending blocks we asked for. */
  private static final long MAX_HOLD_MILLIS = 1_000;

  /** What the engine needs done; every call comes on the engine's thread. */
  public interface Output {
    /** Send {@code message} to {@code peer}; report {@link #sent} or {@link #unsent}. */
    void send(PeerId peer, Outgoing message);

    /** Run {@link Turn#load} off this thread; report {@link #turnDone}. */
    void load(Turn turn);

    /** Write a received block to the blockstore off this thread; report {@link #stored}. */
    void store(Cid cid, byte[] data);

    /** Whether {@code peer}'s stream takes a message now (nothing queued, writable). */
    boolean canSend(PeerId peer);

    /** Call {@link #flush} soon, after the events now being handled (batches our wants). */
    void flushSoon();

    /**
     * Call {@link #flush} after {@code delay} (wants held for a busy peer are due then); without
     * it, held wants go out on the first {@link #tick} after their hold.
     */
    default void flushAfter(final Duration delay) {}
  }

  /** A message for a peer and the ledger entries it serves (none for wants and cancels). */
  public static final class Outgoing {
    private final BitswapFrame frame;
    private final List<LedgerEntry> served;

    private Outgoing(final BitswapFrame frame, final List<LedgerEntry> served) {
      this.frame = frame;
      this.served = served;
    }

    public BitswapFrame frame() {
      return frame;
    }

    /** Block bytes it carries. */
    public long blockBytes() {
      long bytes = 0;
      for (final Block block : frame.blocks()) {
        bytes += block.data().length;
      }
      return bytes;
    }
  }

  /** One want a turn reads. */
  public record Request(Cid cid, WantType type) {}

  /** What a turn found for one want: the block, or whether we have it. */
  public record Outcome(Cid cid, byte[] data, boolean have) {}

  /** One peer's turn: wants to read until {@link #budget()} block bytes are read. */
  public static final class Turn {
    private final PeerId peer;
    private final List<LedgerEntry> entries;
    private final List<Request> requests;
    private final long budget;
    private final int replaceHave;

    private Turn(final PeerId peer, final List<LedgerEntry> entries, final long budget,
        final int replaceHave) {
      this.peer = peer;
      this.entries = entries;
      final List<Request> list = new ArrayList<>(entries.size());
      for (final LedgerEntry entry : entries) {
        list.add(new Request(entry.cid, entry.type));
      }
      this.requests = List.copyOf(list);
      this.budget = budget;
      this.replaceHave = replaceHave;
    }

    public PeerId peer() {
      return peer;
    }

    public List<Request> requests() {
      return requests;
    }

    public long budget() {
      return budget;
    }

    /**
     * Reads the wants in order until the block bytes read reach the budget (the last block may
     * overshoot it): one outcome per want looked at, so {@code outcomes.size()} tells how many.
     * Safe on any thread; touches no engine state.
     */
    public List<Outcome> load(final Blockstore blockstore) {
      final List<Outcome> outcomes = new ArrayList<>();
      long bytes = 0;
      for (final Request request : requests) {
        if (bytes >= budget) {
          break;
        }
        try {
          if (request.type() == WantType.HAVE) {
            final Optional<Integer> size = blockstore.size(request.cid());
            if (size.isPresent() && size.get() <= replaceHave) {
              final Optional<byte[]> data = blockstore.get(request.cid());
              outcomes.add(new Outcome(request.cid(), data.orElse(null), data.isPresent()));
              bytes += data.map(d -> d.length).orElse(0);
            } else {
              outcomes.add(new Outcome(request.cid(), null, size.isPresent()));
            }
          } else {
            final Optional<byte[]> data = blockstore.get(request.cid());
            bytes += data.map(d -> d.length).orElse(0);
            outcomes.add(new Outcome(request.cid(), data.orElse(null), data.isPresent()));
          }
        } catch (final RuntimeException e) {
          LOG.warn("bitswap: reading {} failed: {}", request.cid(), e.toString());
          outcomes.add(new Outcome(request.cid(), null, false));
        }
      }
      return outcomes;
    }
  }

  /** One entry of a peer's wantlist. */
  static final class LedgerEntry {
    private final Cid cid;
    private WantType type;
    private int priority;
    private boolean sendDontHave;
    /** Whether it is in the peer's queue of wants to look at. */
    private boolean queued;
    /** Whether we told this peer DONT_HAVE already (said once per want). */
    private boolean dontHaveSent;
    /** Its block (or HAVE) is in a message not yet written. */
    private boolean sending;
    /** When it last became ready to serve (queued), nanoseconds of the engine's clock. */
    private long readySince;

    LedgerEntry(final Cid cid, final WantType type, final int priority,
        final boolean sendDontHave) {
      this.cid = cid;
      this.type = type;
      this.priority = priority;
      this.sendDontHave = sendDontHave;
    }
  }

  /** Our side of one bitswap peer. */
  private static final class PeerState {
    private final PeerId peer;
    private final Map<Multihash, LedgerEntry> ledger = new HashMap<>();
    private final ArrayDeque<Multihash> queue = new ArrayDeque<>();
    /** Served entries whose message could not be sent (no stream): served on its next message. */
    private final List<LedgerEntry> parked = new ArrayList<>();
    private boolean loading;
    private final List<Want> wantBuffer = new ArrayList<>();
    /** WANT-BLOCKs we sent this peer whose block has not come yet. */
    private final Set<Multihash> awaiting = new HashSet<>();
    /** When our buffered wants started waiting for {@link #awaiting} to empty (-1: not held). */
    private long heldSince = -1;

    PeerState(final PeerId peer) {
      this.peer = peer;
    }
  }

  private final BitswapConfig config;
  private final Clock clock;
  private final Output output;
  private final TurnScheduler scheduler;
  private final WantManager wants;
  private final Map<PeerId, PeerState> peers = new HashMap<>();
  private final Set<PeerId> bitswapPeers = new LinkedHashSet<>();
  /** Peers with buffered wants to flush. */
  private final Set<PeerId> dirty = new LinkedHashSet<>();
  private boolean flushRequested;
  private int loadsInFlight;
  private boolean closed;
  private final AtomicLong blocksSent = new AtomicLong();
  private final AtomicLong bytesSent = new AtomicLong();
  private final AtomicLong messagesReceived = new AtomicLong();
  private final AtomicLong messagesSent = new AtomicLong();
  private final AtomicLong haveSent = new AtomicLong();
  private final AtomicLong dontHaveSent = new AtomicLong();
  private final AtomicLong ledgerEntries = new AtomicLong();
  private final AtomicLong ledgerPeers = new AtomicLong();
  private volatile int peerCount;
  private final Map<BitswapReject, AtomicLong> rejected = new ConcurrentHashMap<>();
  private final ServeTimes serveTimes = new ServeTimes();

  public BitswapEngine(final BitswapConfig config, final Clock clock, final Output output) {
    this(config, clock, output, new DeficitRoundRobin(config.bytesPerTurn()));
  }

  /** With another turn order (tests compare orders). */
  BitswapEngine(final BitswapConfig config, final Clock clock, final Output output,
      final TurnScheduler scheduler) {
    this.config = config;
    this.clock = clock;
    this.output = output;
    this.scheduler = scheduler;
    this.wants = new WantManager(config, clock, new WantSink(), bitswapPeers);
  }

  // ---------------------------------------------------------------- peers

  /** {@code peer} speaks bitswap and is connected: it gets our open wants. */
  public void peerConnected(final PeerId peer) {
    if (closed || !bitswapPeers.add(peer)) {
      return;
    }
    peerCount = bitswapPeers.size();
    wants.peerAdded(peer);
  }

  /** {@code peer}'s last connection closed: its ledger goes, wants move to other peers. */
  public void peerDisconnected(final PeerId peer) {
    bitswapPeers.remove(peer);
    peerCount = bitswapPeers.size();
    dirty.remove(peer);
    scheduler.remove(peer);
    final PeerState state = peers.remove(peer);
    if (state != null) {
      dropLedger(state);
    }
    wants.peerRemoved(peer);
  }

  /** Whether the engine has work for {@code peer}'s stream (it should not be closed as idle). */
  public boolean busy(final PeerId peer) {
    final PeerState state = peers.get(peer);
    return state != null && (state.loading || !state.queue.isEmpty());
  }

  // ---------------------------------------------------------------- receiving

  /**
   * A message from a connected peer ({@code rejectedBlocks}: blocks dropped by the codec).
   *
   * @return false when the message broke a bound (its wants overflowed the peer's wantlist,
   *     {@link BitswapReject#WANTLIST_FULL}): the host adapter reports it as the peer's fault
   */
  public boolean received(final PeerId peer, final BitswapFrame frame, final int rejectedBlocks) {
    if (closed) {
      return true;
    }
    messagesReceived.incrementAndGet();
    if (rejectedBlocks > 0) {
      rejected.computeIfAbsent(BitswapReject.BAD_BLOCK, r -> new AtomicLong())
          .addAndGet(rejectedBlocks);
    }
    peerConnected(peer);
    boolean withinBounds = true;
    if (frame.full() || !frame.wants().isEmpty()) {
      withinBounds = updateLedger(state(peer), frame);
    }
    final PeerState known = peers.get(peer);
    if (known != null) {
      unpark(known);
    }
    for (final Presence presence : frame.presences()) {
      wants.presence(peer, presence);
    }
    for (final Block block : frame.blocks()) {
      wants.block(peer, block);
    }
    return withinBounds;
  }

  /** Returns false when the wants overflowed the wantlist. */
  private boolean updateLedger(final PeerState state, final BitswapFrame frame) {
    final boolean wasEmpty = state.ledger.isEmpty();
    if (frame.full()) {
      ledgerEntries.addAndGet(-state.ledger.size());
      state.ledger.clear();
      state.queue.clear();
      state.parked.clear();
    }
    boolean overflow = false;
    for (final Want want : frame.wants()) {
      final Multihash key = want.cid().multihash();
      if (want.cancel()) {
        if (state.ledger.remove(key) != null) {
          ledgerEntries.decrementAndGet();
        }
        continue;
      }
      LedgerEntry entry = state.ledger.get(key);
      if (entry == null) {
        if (state.ledger.size() >= config.maxWantsPerPeer()) {
          overflow = true;
          continue;
        }
        entry = new LedgerEntry(want.cid(), want.type(), want.priority(), want.sendDontHave());
        state.ledger.put(key, entry);
        ledgerEntries.incrementAndGet();
      } else {
        if (want.type() == WantType.BLOCK) {
          entry.type = WantType.BLOCK;
        }
        entry.priority = want.priority();
        entry.sendDontHave = want.sendDontHave();
        entry.dontHaveSent = false;
      }
      requeue(state, entry);
    }
    if (overflow) {
      reject(BitswapReject.WANTLIST_FULL);
    }
    if (wasEmpty && !state.ledger.isEmpty()) {
      ledgerPeers.incrementAndGet();
    } else if (!wasEmpty && state.ledger.isEmpty()) {
      ledgerPeers.decrementAndGet();
    }
    if (state.queue.size() > 2 * config.maxWantsPerPeer()) {
      compactQueue(state);
    }
    makeReady(state);
    schedule();
    return !overflow;
  }

  /** Drops queue slots whose want was cancelled. */
  private static void compactQueue(final PeerState state) {
    final Iterator<Multihash> keys = state.queue.iterator();
    final Set<Multihash> seen = new HashSet<>();
    while (keys.hasNext()) {
      final Multihash key = keys.next();
      final LedgerEntry entry = state.ledger.get(key);
      if (entry == null || !entry.queued || !seen.add(key)) {
        keys.remove();
      }
    }
  }

  private void requeue(final PeerState state, final LedgerEntry entry) {
    if (!entry.queued) {
      entry.queued = true;
      entry.readySince = nanos();
      state.queue.add(entry.cid.multihash());
    }
  }

  /** The engine clock's time in nanoseconds (its resolution: microseconds on the system clock). */
  private long nanos() {
    final Instant now = clock.instant();
    return now.getEpochSecond() * 1_000_000_000L + now.getNano();
  }

  /** A peer we could not open a stream to spoke again: its parked wants are served now. */
  private void unpark(final PeerState state) {
    if (state.parked.isEmpty()) {
      return;
    }
    for (final LedgerEntry entry : state.parked) {
      if (state.ledger.get(entry.cid.multihash()) == entry) {
        requeue(state, entry);
      }
    }
    state.parked.clear();
    makeReady(state);
    schedule();
  }

  /** {@code cid} is now in the blockstore: peers that want it are served. */
  public void blockAdded(final Multihash key) {
    if (closed) {
      return;
    }
    for (final PeerState state : peers.values()) {
      final LedgerEntry entry = state.ledger.get(key);
      if (entry != null && !entry.queued && !entry.sending) {
        requeue(state, entry);
        makeReady(state);
      }
    }
    schedule();
  }

  // ---------------------------------------------------------------- serving

  private void makeReady(final PeerState state) {
    if (!state.queue.isEmpty()) {
      scheduler.ready(state.peer);
    }
  }

  /** {@code peer}'s stream takes messages again: it gets turns. */
  public void drained(final PeerId peer) {
    final PeerState state = peers.get(peer);
    if (state != null && !closed) {
      makeReady(state);
      schedule();
    }
  }

  private boolean canTakeTurn(final PeerId peer) {
    final PeerState state = peers.get(peer);
    return state != null && !state.loading && !state.queue.isEmpty() && output.canSend(peer);
  }

  /** Starts turns, in the scheduler's order, while loads are allowed. */
  private void schedule() {
    while (!closed && loadsInFlight < config.maxConcurrentLoads()) {
      final TurnScheduler.Grant grant = scheduler.next(this::canTakeTurn);
      if (grant == null) {
        return;
      }
      startTurn(peers.get(grant.peer()), grant.budget());
    }
  }

  private void startTurn(final PeerState state, final long budget) {
    final List<LedgerEntry> batch = new ArrayList<>();
    while (batch.size() < WANTS_PER_TURN && !state.queue.isEmpty()) {
      final LedgerEntry entry = state.ledger.get(state.queue.poll());
      if (entry == null || !entry.queued) {
        continue;
      }
      entry.queued = false;
      batch.add(entry);
    }
    if (batch.isEmpty()) {
      scheduler.done(state.peer, 0, false);
      return;
    }
    // Higher priority first within the turn; the sort is stable, so equal ones keep their order.
    batch.sort(Comparator.comparingInt((LedgerEntry e) -> e.priority).reversed());
    state.loading = true;
    loadsInFlight++;
    output.load(new Turn(state.peer, batch, budget, config.maxSizeReplaceHaveWithBlock()));
  }

  /** {@code turn} was read: {@code outcomes} for its first wants, the rest are put back. */
  public void turnDone(final Turn turn, final List<Outcome> outcomes) {
    loadsInFlight--;
    final PeerState state = peers.get(turn.peer);
    if (state == null || closed || !state.loading) {
      schedule();
      return;
    }
    state.loading = false;
    final List<LedgerEntry> rest = turn.entries.subList(Math.min(outcomes.size(),
        turn.entries.size()), turn.entries.size());
    // Unlooked-at wants go back to the front, in order.
    for (int i = rest.size() - 1; i >= 0; i--) {
      final LedgerEntry entry = rest.get(i);
      if (state.ledger.get(entry.cid.multihash()) == entry && !entry.queued) {
        entry.queued = true;
        state.queue.addFirst(entry.cid.multihash());
      }
    }
    long bytes = 0;
    final List<Block> blocks = new ArrayList<>();
    final List<LedgerEntry> blockEntries = new ArrayList<>();
    final List<Presence> presences = new ArrayList<>();
    final List<LedgerEntry> haveEntries = new ArrayList<>();
    for (int i = 0; i < outcomes.size() && i < turn.entries.size(); i++) {
      final Outcome outcome = outcomes.get(i);
      final LedgerEntry entry = turn.entries.get(i);
      if (outcome.data() != null) {
        bytes += outcome.data().length;
      }
      if (state.ledger.get(entry.cid.multihash()) != entry || entry.queued) {
        // Cancelled while we read, or asked again (looked at in a later turn).
        continue;
      }
      if (outcome.data() != null) {
        blocks.add(new Block(entry.cid, outcome.data()));
        blockEntries.add(entry);
        entry.sending = true;
      } else if (outcome.have()) {
        if (entry.type == WantType.BLOCK) {
          // Vanished between size() and get(): it stays for a later arrival.
          continue;
        }
        presences.add(new Presence(entry.cid, true));
        haveEntries.add(entry);
        entry.sending = true;
        haveSent.incrementAndGet();
      } else if (entry.sendDontHave && !entry.dontHaveSent) {
        // Kept in the ledger: served if the block arrives later.
        entry.dontHaveSent = true;
        presences.add(new Presence(entry.cid, false));
        dontHaveSent.incrementAndGet();
      }
    }
    scheduler.done(state.peer, bytes, !state.queue.isEmpty());
    sendServed(state, blocks, blockEntries, presences, haveEntries);
    schedule();
  }

  /** Packs blocks and presences into messages under the send limit and sends them. */
  private void sendServed(final PeerState state, final List<Block> blocks,
      final List<LedgerEntry> blockEntries, final List<Presence> presences,
      final List<LedgerEntry> haveEntries) {
    if (blocks.isEmpty() && presences.isEmpty()) {
      return;
    }
    List<Block> batch = new ArrayList<>();
    List<LedgerEntry> served = new ArrayList<>();
    long batchBytes = 0;
    for (int i = 0; i < blocks.size(); i++) {
      final Block block = blocks.get(i);
      final int size = block.data().length + BitswapFrameCodec.blockOverhead(block.cid());
      if (!batch.isEmpty() && batchBytes + size > config.maxSendMessageSize()) {
        send(state.peer, new Outgoing(new BitswapFrame(List.of(), false, batch, List.of(), 0),
            served));
        batch = new ArrayList<>();
        served = new ArrayList<>();
        batchBytes = 0;
      }
      batch.add(block);
      served.add(blockEntries.get(i));
      batchBytes += size;
    }
    served.addAll(haveEntries);
    send(state.peer, new Outgoing(new BitswapFrame(List.of(), false, batch, presences, 0),
        served));
  }

  private void send(final PeerId peer, final Outgoing message) {
    if (!message.frame.isEmpty()) {
      output.send(peer, message);
    }
  }

  /** {@code message} was written to {@code peer}: the wants it served are done. */
  public void sent(final PeerId peer, final Outgoing message) {
    messagesSent.incrementAndGet();
    for (final Block block : message.frame.blocks()) {
      blocksSent.incrementAndGet();
      bytesSent.addAndGet(block.data().length);
    }
    final PeerState state = peers.get(peer);
    if (state == null) {
      return;
    }
    final long now = message.served.isEmpty() ? 0 : nanos();
    for (final LedgerEntry entry : message.served) {
      final Multihash key = entry.cid.multihash();
      if (state.ledger.get(key) == entry && entry.sending) {
        entry.sending = false;
        serveTimes.record(now - entry.readySince);
        if (!entry.queued) {
          removeEntry(state, key);
        }
      }
    }
  }

  /**
   * {@code message} to {@code peer} was dropped or failed with {@code reason}: the wants it served
   * stay and are looked at again, at once or, when {@code park}, on the peer's next message; our
   * own wants it carried are asked again ({@link WantManager#undelivered}).
   */
  public void unsent(final PeerId peer, final Outgoing message, final BitswapReject reason,
      final boolean park) {
    if (reason != null) {
      reject(reason);
    }
    if (!closed && !message.frame.wants().isEmpty()) {
      wants.undelivered(peer, message.frame.wants());
    }
    final PeerState state = peers.get(peer);
    if (message.served.isEmpty() || state == null || closed) {
      return;
    }
    for (final LedgerEntry entry : message.served) {
      if (state.ledger.get(entry.cid.multihash()) == entry && entry.sending) {
        entry.sending = false;
        if (park) {
          state.parked.add(entry);
        } else {
          // Ready all along: its serve time still counts from then.
          final long since = entry.readySince;
          requeue(state, entry);
          entry.readySince = since;
        }
      }
    }
    if (!park) {
      makeReady(state);
      schedule();
    }
  }

  private void removeEntry(final PeerState state, final Multihash key) {
    if (state.ledger.remove(key) != null) {
      ledgerEntries.decrementAndGet();
      if (state.ledger.isEmpty()) {
        ledgerPeers.decrementAndGet();
      }
    }
  }

  private void dropLedger(final PeerState state) {
    if (!state.ledger.isEmpty()) {
      ledgerEntries.addAndGet(-state.ledger.size());
      ledgerPeers.decrementAndGet();
      state.ledger.clear();
    }
    state.queue.clear();
    state.parked.clear();
  }

  // ---------------------------------------------------------------- client

  /**
   * {@code waiter} wants the block of {@code cid} (not in our blockstore): it completes with the
   * block, fails with {@link java.util.concurrent.TimeoutException} once {@code timeout} has
   * passed on the clock ({@link #tick}), or when the engine closes. {@code store}: the block is
   * written to the blockstore ({@link Output#store}) before {@code waiter} completes.
   */
  public void want(final Cid cid, final CompletableFuture<byte[]> waiter,
      final Duration timeout, final boolean store) {
    if (closed) {
      waiter.completeExceptionally(new IllegalStateException("bitswap is closed"));
      return;
    }
    wants.want(cid, waiter, timeout, store);
  }

  /** {@code waiter} was cancelled or failed: the want goes when nobody else waits for it. */
  public void waiterGone(final Cid cid, final CompletableFuture<byte[]> waiter) {
    if (!closed) {
      wants.waiterGone(cid.multihash(), waiter);
    }
  }

  /** The blockstore write asked by {@link Output#store} finished ({@code error} null: kept). */
  public void stored(final Cid cid, final Throwable error) {
    if (!closed) {
      wants.stored(cid.multihash(), error);
    }
  }

  private PeerState state(final PeerId peer) {
    return peers.computeIfAbsent(peer, PeerState::new);
  }

  private void queueWant(final PeerId peer, final Want want) {
    final PeerState state = state(peer);
    state.wantBuffer.add(want);
    markDirty(state);
  }

  private void markDirty(final PeerState state) {
    dirty.add(state.peer);
    if (!flushRequested) {
      flushRequested = true;
      output.flushSoon();
    }
  }

  /** Sends buffered wants, except to peers that still owe us blocks (held up to 1 s). */
  public void flush() {
    flushRequested = false;
    if (closed) {
      return;
    }
    final long now = clock.millis();
    for (final Iterator<PeerId> it = dirty.iterator(); it.hasNext();) {
      final PeerState state = peers.get(it.next());
      if (state == null || state.wantBuffer.isEmpty()) {
        it.remove();
        continue;
      }
      if (!state.awaiting.isEmpty()) {
        if (state.heldSince < 0) {
          state.heldSince = now;
          output.flushAfter(Duration.ofMillis(MAX_HOLD_MILLIS));
        }
        if (now - state.heldSince < MAX_HOLD_MILLIS) {
          // Stays dirty: sent when the peer owes nothing ({@link #released}) or by tick().
          continue;
        }
      }
      it.remove();
      state.heldSince = -1;
      List<Want> batch = new ArrayList<>();
      for (final Want want : state.wantBuffer) {
        final Multihash key = want.cid().multihash();
        if (want.cancel()) {
          state.awaiting.remove(key);
        } else if (want.type() == WantType.BLOCK && wants.isOpen(key)) {
          state.awaiting.add(key);
        }
        batch.add(want);
        if (batch.size() == WANTS_PER_MESSAGE) {
          send(state.peer, new Outgoing(new BitswapFrame(batch, false, List.of(), List.of(), 0),
              List.of()));
          batch = new ArrayList<>();
        }
      }
      state.wantBuffer.clear();
      if (!batch.isEmpty()) {
        send(state.peer, new Outgoing(new BitswapFrame(batch, false, List.of(), List.of(), 0),
            List.of()));
      }
    }
  }

  /** Periodic work: timeouts and rebroadcasts of our wants, held wants past their hold. */
  public void tick() {
    if (closed) {
      return;
    }
    wants.tick();
    if (!dirty.isEmpty()) {
      flush();
    }
  }

  private final class WantSink implements WantManager.Sink {
    @Override
    public void sendWant(final PeerId peer, final Want want) {
      queueWant(peer, want);
    }

    @Override
    public void released(final PeerId peer, final Multihash key) {
      final PeerState state = peers.get(peer);
      if (state != null && state.awaiting.remove(key) && state.awaiting.isEmpty()
          && !state.wantBuffer.isEmpty()) {
        markDirty(state);
      }
    }

    @Override
    public void store(final Cid cid, final byte[] data) {
      output.store(cid, data);
    }

    @Override
    public void blockKept(final Multihash key) {
      blockAdded(key);
    }
  }

  // ---------------------------------------------------------------- state and stats

  /** Counts a refusal or loss (also for the adapter's own: stream faults). */
  public void reject(final BitswapReject reason) {
    rejected.computeIfAbsent(reason, r -> new AtomicLong()).incrementAndGet();
  }

  /** Fails every waiting caller and forgets all state; later calls do nothing. */
  public void close() {
    closed = true;
    wants.closeAll(new IllegalStateException("bitswap is closed"));
    peers.clear();
    dirty.clear();
    ledgerEntries.set(0);
    ledgerPeers.set(0);
  }

  /** Counters and gauges now (any thread). */
  public BitswapStats stats() {
    final Map<String, Long> reasons = new TreeMap<>();
    rejected.forEach((reason, count) -> reasons.put(reason.label(), count.get()));
    return new BitswapStats(blocksSent.get(), bytesSent.get(), wants.blocksReceived.get(),
        wants.bytesReceived.get(), wants.duplicateBlocks.get(), wants.unwantedBlocks.get(),
        messagesReceived.get(), messagesSent.get(), haveSent.get(), dontHaveSent.get(),
        ledgerEntries.get(), ledgerPeers.get(), wants.clientWants.get(), reasons,
        serveTimes.snapshot());
  }

  /** Wantlist entries each peer has with us. */
  public Map<PeerId, Integer> wantlistSizes() {
    final Map<PeerId, Integer> sizes = new HashMap<>();
    for (final PeerState state : peers.values()) {
      if (!state.ledger.isEmpty()) {
        sizes.put(state.peer, state.ledger.size());
      }
    }
    return Map.copyOf(sizes);
  }

  /** Bitswap peers now. */
  public Set<PeerId> peers() {
    return Set.copyOf(bitswapPeers);
  }

  /** How many connected peers speak bitswap (any thread). */
  public int peerCount() {
    return peerCount;
  }

  /** Distinct CIDs we are fetching. */
  public int openWants() {
    return wants.size();
  }
}
