package io.relaypinner.ipfs.bitswap;

import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import io.relaypinner.ipfs.bitswap.BitswapFrame.Block;
import io.relaypinner.ipfs.bitswap.BitswapFrame.Presence;
import io.relaypinner.ipfs.bitswap.BitswapFrame.Want;
import io.relaypinner.ipfs.bitswap.BitswapFrame.WantType;
import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.libp2p.host.Connection;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.HostListener;
import io.relaypinner.libp2p.host.PeerInboundQueue;
import io.relaypinner.libp2p.netty.UvarintFrameDecoder;
import io.relaypinner.libp2p.netty.UvarintFrameEncoder;
import io.relaypinner.libp2p.netty.WriteOnlyStreamHandler;
import io.relaypinner.libp2p.protocol.identify.IdentifyResult;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multihash;
import io.relaypinner.multiformats.PeerId;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Bitswap 1.2.0 (also answering 1.1.0 and 1.0.0; ipfs/specs src/bitswap-protocol.md) on a
 * {@link Host}: serves the blocks of a {@link Blockstore} to peers that want them, and fetches
 * blocks from connected peers ({@link #get}).
 *
 * <p><b>Streams.</b> As Helia does, a peer's stream to us is only read, and everything we send
 * goes on our own stream to the peer, opened when needed (after the peer's identify listed
 * bitswap, or after it opened a bitswap stream to us) and closed after
 * {@link BitswapConfig#outboundIdleTimeout()} without use (Helia aborts idle inbound streams).
 *
 * <p><b>Server.</b> Each peer has a ledger (its wantlist, at most {@link
 * BitswapConfig#maxWantsPerPeer()} entries). WANT-BLOCK is answered with the block, or
 * DONT_HAVE when asked and we lack it; WANT-HAVE with HAVE, or the block itself when it is at most
 * {@link BitswapConfig#maxSizeReplaceHaveWithBlock()} bytes. Unsatisfied wants stay in the ledger
 * and are served when the block arrives through this node's own fetches, or when
 * {@link #blockAdded} is called. Cancel removes a want; a full wantlist replaces the old one.
 * Peers with pending wants are served round-robin: one turn reads at most
 * {@link BitswapConfig#bytesPerTurn()} bytes of blocks (on the caller's storage executor, at most
 * {@link BitswapConfig#maxConcurrentLoads()} turns at once) and sends them in messages of at
 * most {@link BitswapConfig#maxSendMessageSize()}; a peer whose stream is not writable gets no
 * turn until it drains. So one peer wanting 100,000 blocks gets one turn in the rotation like
 * everybody else. A served want leaves the ledger only once the message carrying its block (or
 * HAVE) is written; a message dropped (full outbox) or failed is served again, and one we could
 * not open a stream for is served when the peer next sends us a message.
 *
 * <p><b>Client.</b> {@link #get} fetches one block: wants for the same CID are shared. A want is
 * sent as WANT-BLOCK to a peer that recently had blocks (HAVE or a delivered block) and as
 * WANT-HAVE to the other bitswap peers; the first peer answering HAVE gets the WANT-BLOCK when
 * none is outstanding, a DONT_HAVE moves it to the next peer that has it. Unanswered wants are
 * re-sent every {@link BitswapConfig#rebroadcastInterval()} (unless the peer asked for the block
 * has sent us anything within that time: it is busy, not gone) and to every peer that connects.
 * Received blocks are verified against their CID (by the codec), stored, and cancels go to every
 * other peer asked (the sender already dropped the want). New wants and cancels for a peer that
 * is still sending blocks we asked it for are held until it has sent them (at most 1 s): a
 * message to a busy Helia 5 makes it send its whole queue again. Blocks nobody wants are counted
 * and dropped.
 *
 * <p>Threading: one event loop of the host owns all state; blockstore calls run on the storage
 * executor. Every public method may be called from any thread and does not block.
 */
public final class Bitswap implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Bitswap.class);
  private static final int MAX_OPEN_ATTEMPTS = 3;
  /** Wants named per message when sending a peer our whole list. */
  private static final int WANTS_PER_MESSAGE = 1_000;
  /** Wants one turn looks at (the turn stops earlier at the byte budget). */
  private static final int WANTS_PER_TURN = 512;
  /** Received multihashes remembered to tell duplicates from unwanted blocks. */
  private static final int RECENT_BLOCKS = 8_192;
  private static final long TICK_MILLIS = 500;
  /**
   * Longest our wants to a peer wait while it is still sending blocks we asked for. Helia 5
   * answers every message by sending again all blocks of its queue not yet fully written, so a
   * message during its send doubles the traffic; Helia 6 and Kubo do not, and lose at most this.
   */
  private static final long MAX_HOLD_NANOS = TimeUnit.MILLISECONDS.toNanos(1_000);

  /** One entry of a peer's wantlist. */
  private static final class LedgerEntry {
    private final Cid cid;
    private WantType type;
    private boolean sendDontHave;
    /** Whether it is in the peer's queue of wants to look at. */
    private boolean queued;
    /** Whether we told this peer DONT_HAVE already (said once per want). */
    private boolean dontHaveSent;
    /**
     * Its block (or HAVE) is in a message not yet written: the entry leaves the ledger when the
     * write succeeds, and is looked at again when the message is dropped or the write fails.
     */
    private boolean sending;

    LedgerEntry(final Cid cid, final WantType type, final boolean sendDontHave) {
      this.cid = cid;
      this.type = type;
      this.sendDontHave = sendDontHave;
    }
  }

  /** Our side of one peer: confined to the loop. */
  private static final class PeerState {
    private final PeerId peer;
    private Channel outbound;
    private BitswapProtocol.Version version = BitswapProtocol.Version.V1_2;
    private boolean opening;
    private int failedOpens;
    private long lastUse;
    private final ArrayDeque<Outgoing> outbox = new ArrayDeque<>();
    /** Served entries whose message could not be sent (no stream): served on its next message. */
    private final List<LedgerEntry> parked = new ArrayList<>();
    private final List<Want> wantBuffer = new ArrayList<>();
    private final List<Presence> presenceBuffer = new ArrayList<>();
    private boolean flushScheduled;
    /** WANT-BLOCKs we sent this peer whose block has not come yet. */
    private final Set<Multihash> awaiting = new HashSet<>();
    /** When our buffered wants started waiting for {@link #awaiting} to empty (0: not held). */
    private long heldSince;
    private final Map<Multihash, LedgerEntry> ledger = new HashMap<>();
    private final ArrayDeque<Multihash> queue = new ArrayDeque<>();
    private boolean loading;
    private boolean ready;

    PeerState(final PeerId peer) {
      this.peer = peer;
    }
  }

  /** One CID the client is fetching. */
  private static final class ClientWant {
    private final Cid cid;
    private final List<CompletableFuture<byte[]>> waiters = new ArrayList<>();
    private final Set<PeerId> asked = new HashSet<>();
    private final Set<PeerId> haves = new LinkedHashSet<>();
    private final Set<PeerId> dontHaves = new HashSet<>();
    private PeerId blockPeer;
    private long lastAsk;
    private boolean storing;
    /** Whether a received block goes into the blockstore (some waiter came through get()). */
    private boolean store;

    ClientWant(final Cid cid) {
      this.cid = cid;
    }
  }

  /** What a turn found for one want. */
  private record Outcome(Multihash key, Cid cid, byte[] data, boolean have) {}

  /** A message to send and the ledger entries it serves (empty for wants and cancels). */
  private record Outgoing(BitswapFrame frame, List<LedgerEntry> served) {}

  private final Host host;
  private final Blockstore blockstore;
  private final Executor storage;
  private final BitswapConfig config;
  private final BitswapFrameCodec codec;
  private final EventExecutor loop;
  private final Map<PeerId, PeerState> peers = new HashMap<>();
  private final Set<PeerId> bitswapPeers = new LinkedHashSet<>();
  private final ArrayDeque<PeerState> ready = new ArrayDeque<>();
  private int loadsInFlight;
  private final Map<Multihash, ClientWant> wants = new HashMap<>();
  /** When each bitswap peer last sent us a message (nanoTime). */
  private final Map<PeerId, Long> lastHeard = new HashMap<>();
  /** Peers that recently had blocks for us, most recent last. */
  private final LinkedHashMap<PeerId, Long> providers = new LinkedHashMap<>();
  private final Set<Multihash> recent = Collections.newSetFromMap(
      new LinkedHashMap<>(16, 0.75f, false) {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(final Map.Entry<Multihash, Boolean> eldest) {
          return size() > RECENT_BLOCKS;
        }
      });
  private final AtomicLong blocksSent = new AtomicLong();
  private final AtomicLong bytesSent = new AtomicLong();
  private final AtomicLong blocksReceived = new AtomicLong();
  private final AtomicLong bytesReceived = new AtomicLong();
  private final AtomicLong duplicateBlocks = new AtomicLong();
  private final AtomicLong unwantedBlocks = new AtomicLong();
  private final AtomicLong messagesReceived = new AtomicLong();
  private final AtomicLong messagesSent = new AtomicLong();
  private final AtomicLong haveSent = new AtomicLong();
  private final AtomicLong dontHaveSent = new AtomicLong();
  private final AtomicLong ledgerEntries = new AtomicLong();
  private final AtomicLong ledgerPeers = new AtomicLong();
  private final AtomicLong clientWants = new AtomicLong();
  private volatile int peerCount;
  private final Map<BitswapReject, AtomicLong> rejected = new ConcurrentHashMap<>();
  private ScheduledFuture<?> ticker;
  private volatile boolean closed;

  private Bitswap(final Host host, final Blockstore blockstore, final Executor storage,
      final BitswapConfig config) {
    this.host = host;
    this.blockstore = blockstore;
    this.storage = storage;
    this.config = config;
    this.codec = new BitswapFrameCodec(config);
    this.loop = host.eventLoops().group().next();
  }

  /**
   * Registers {@code /ipfs/bitswap/1.2.0}, {@code 1.1.0} and {@code 1.0.0} on {@code host} and
   * starts serving {@code blockstore}.
   *
   * @param storage runs blockstore reads and writes; should be bounded (the caller owns it)
   */
  public static Bitswap start(final Host host, final Blockstore blockstore,
      final Executor storage, final BitswapConfig config) {
    final Bitswap bitswap = new Bitswap(host, blockstore, storage, config);
    bitswap.register();
    return bitswap;
  }

  private void register() {
    for (final String id : BitswapProtocol.PROTOCOL_IDS) {
      host.protocols().register(id, (stream, protocol) -> {
        final Connection connection = Connection.of(stream).orElseThrow();
        final PeerId peer = connection.remotePeer();
        stream.pipeline().addLast("bitswap-idle", new IdleStateHandler(
            config.inboundIdleTimeout().toMillis(), 0, 0, TimeUnit.MILLISECONDS));
        stream.pipeline().addLast("bitswap-frames",
            new UvarintFrameDecoder(config.maxMessageSize()));
        // Flow control: the peer's streams stop reading (so yamux stops granting window) while
        // its budget of decoded messages waiting, over all its streams and protocols, is full.
        final PeerInboundQueue queue = connection.inboundQueue();
        stream.pipeline().addLast("bitswap-in", new BitswapInboundHandler(codec,
            (decoded, size) -> {
              final Runnable release = queue.admit(stream, size);
              onLoopAlways(() -> {
                try {
                  if (!closed) {
                    received(peer, decoded);
                  }
                } finally {
                  release.run();
                }
              });
            }, this::reject));
        onLoop(() -> bitswapPeerSeen(peer));
      });
    }
    host.addListener(new HostListener() {
      @Override
      public void peerIdentified(final Connection connection, final IdentifyResult result) {
        if (BitswapProtocol.PROTOCOL_IDS.stream().anyMatch(result::supports)) {
          onLoop(() -> bitswapPeerSeen(connection.remotePeer()));
        }
      }

      @Override
      public void connectionClosed(final Connection connection) {
        onLoop(() -> connectionGone(connection.remotePeer()));
      }
    });
    for (final Connection connection : host.connections()) {
      final boolean speaks = host.peerStore().get(connection.remotePeer())
          .map(info -> info.protocols().stream()
              .anyMatch(BitswapProtocol.PROTOCOL_IDS::contains))
          .orElse(false);
      if (speaks) {
        onLoop(() -> bitswapPeerSeen(connection.remotePeer()));
      }
    }
    ticker = loop.scheduleAtFixedRate(() -> onLoop(this::tick), TICK_MILLIS, TICK_MILLIS,
        TimeUnit.MILLISECONDS);
  }

  // ---------------------------------------------------------------- API

  /**
   * The block of {@code cid}: from the blockstore if held, otherwise fetched from connected peers
   * and stored. Fails with {@link TimeoutException} after {@code timeout}; cancelling the future
   * withdraws this caller's interest (the want is cancelled when nobody else waits for it).
   */
  public CompletableFuture<byte[]> get(final Cid cid, final Duration timeout) {
    return get(cid, timeout, true);
  }

  /**
   * Like {@link #get}, but a block fetched from the network is handed to the caller only, not
   * stored (it is still checked against {@code cid}): for callers that store a block after their
   * own checks, such as OrbitDB entries whose signature must verify first. When another caller
   * asks {@link #get} for the same block meanwhile, it is stored.
   */
  public CompletableFuture<byte[]> fetch(final Cid cid, final Duration timeout) {
    return get(cid, timeout, false);
  }

  private CompletableFuture<byte[]> get(final Cid cid, final Duration timeout,
      final boolean store) {
    final CompletableFuture<byte[]> result = new CompletableFuture<>();
    if (closed) {
      result.completeExceptionally(new IllegalStateException("bitswap is closed"));
      return result;
    }
    try {
      storage.execute(() -> {
        final Optional<byte[]> held;
        try {
          held = blockstore.get(cid);
        } catch (final RuntimeException e) {
          result.completeExceptionally(e);
          return;
        }
        if (held.isPresent()) {
          result.complete(held.get());
        } else {
          submitWant(cid, result, timeout, store);
        }
      });
    } catch (final RejectedExecutionException e) {
      result.completeExceptionally(e);
    }
    return result;
  }

  /**
   * Registers the want on the loop, or fails {@code result} when bitswap closed meanwhile (a
   * close racing the blockstore lookup must not leave the caller waiting forever).
   */
  private void submitWant(final Cid cid, final CompletableFuture<byte[]> result,
      final Duration timeout, final boolean store) {
    try {
      loop.execute(() -> {
        if (closed) {
          result.completeExceptionally(new IllegalStateException("bitswap is closed"));
          return;
        }
        try {
          want(cid, result, timeout, store);
        } catch (final RuntimeException e) {
          LOG.warn("bitswap want of {} failed", cid, e);
          result.completeExceptionally(e);
        }
      });
    } catch (final RejectedExecutionException e) {
      result.completeExceptionally(new IllegalStateException("bitswap is closed", e));
    }
  }

  /**
   * Tells the server that {@code cid} is now in the blockstore (put there by someone else), so
   * peers waiting for it are served.
   */
  public void blockAdded(final Cid cid) {
    onLoop(() -> requeueWaiting(cid.multihash()));
  }

  /** Counters and gauges now. */
  public BitswapStats stats() {
    final Map<String, Long> reasons = new TreeMap<>();
    rejected.forEach((reason, count) -> reasons.put(reason.label(), count.get()));
    return new BitswapStats(blocksSent.get(), bytesSent.get(), blocksReceived.get(),
        bytesReceived.get(), duplicateBlocks.get(), unwantedBlocks.get(), messagesReceived.get(),
        messagesSent.get(), haveSent.get(), dontHaveSent.get(), ledgerEntries.get(),
        ledgerPeers.get(), clientWants.get(), reasons);
  }

  /** The number of wantlist entries each peer has with us, read on the loop. */
  public CompletableFuture<Map<PeerId, Integer>> wantlistSizes() {
    final CompletableFuture<Map<PeerId, Integer>> result = new CompletableFuture<>();
    loop.execute(() -> {
      final Map<PeerId, Integer> sizes = new HashMap<>();
      for (final PeerState state : peers.values()) {
        if (!state.ledger.isEmpty()) {
          sizes.put(state.peer, state.ledger.size());
        }
      }
      result.complete(Map.copyOf(sizes));
    });
    return result;
  }

  /** Peers known to speak bitswap with an open connection, read on the loop. */
  public CompletableFuture<Set<PeerId>> peers() {
    final CompletableFuture<Set<PeerId>> result = new CompletableFuture<>();
    loop.execute(() -> result.complete(Set.copyOf(bitswapPeers)));
    return result;
  }

  /** How many connected peers speak bitswap now (a cheap read). */
  public int peerCount() {
    return peerCount;
  }

  public BitswapConfig config() {
    return config;
  }

  /** Unregisters the protocols, fails pending gets and closes our streams. */
  @Override
  public void close() {
    closed = true;
    for (final String id : BitswapProtocol.PROTOCOL_IDS) {
      host.protocols().unregister(id);
    }
    loop.execute(() -> {
      if (ticker != null) {
        ticker.cancel(false);
      }
      for (final PeerState state : peers.values()) {
        if (state.outbound != null) {
          state.outbound.close();
        }
      }
      peers.clear();
      for (final ClientWant want : wants.values()) {
        for (final CompletableFuture<byte[]> waiter : want.waiters) {
          waiter.completeExceptionally(new IllegalStateException("bitswap is closed"));
        }
      }
      wants.clear();
      clientWants.set(0);
      ledgerEntries.set(0);
      ledgerPeers.set(0);
    });
  }

  // ---------------------------------------------------------------- loop side: peers

  private void onLoop(final Runnable task) {
    if (closed) {
      return;
    }
    loop.execute(() -> {
      if (closed) {
        return;
      }
      try {
        task.run();
      } catch (final RuntimeException e) {
        LOG.warn("bitswap task failed", e);
      }
    });
  }

  private void reject(final BitswapReject reason) {
    rejected.computeIfAbsent(reason, r -> new AtomicLong()).incrementAndGet();
  }

  private PeerState state(final PeerId peer) {
    return peers.computeIfAbsent(peer, PeerState::new);
  }

  private void bitswapPeerSeen(final PeerId peer) {
    if (host.connection(peer).isEmpty()) {
      return;
    }
    if (bitswapPeers.add(peer)) {
      peerCount = bitswapPeers.size();
      // A new bitswap peer: it gets every want we have open.
      for (final ClientWant want : wants.values()) {
        if (want.asked.add(peer)) {
          queueWant(peer, Want.have(want.cid, true));
        }
      }
    }
  }

  private void connectionGone(final PeerId peer) {
    if (host.connection(peer).isPresent()) {
      return;
    }
    bitswapPeers.remove(peer);
    lastHeard.remove(peer);
    peerCount = bitswapPeers.size();
    providers.remove(peer);
    final PeerState state = peers.remove(peer);
    if (state != null) {
      dropLedger(state);
      ready.remove(state);
      if (state.outbound != null) {
        state.outbound.close();
      }
    }
    for (final ClientWant want : wants.values()) {
      want.asked.remove(peer);
      want.haves.remove(peer);
      if (peer.equals(want.blockPeer)) {
        want.blockPeer = null;
        ask(want);
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
  }

  private void tick() {
    final long now = System.nanoTime();
    final long idle = config.outboundIdleTimeout().toNanos();
    for (final PeerState state : peers.values()) {
      if (state.outbound != null && state.outbox.isEmpty() && !state.loading
          && state.queue.isEmpty() && now - state.lastUse > idle) {
        final Channel channel = state.outbound;
        state.outbound = null;
        channel.close();
      }
    }
    final long rebroadcast = config.rebroadcastInterval().toNanos();
    for (final ClientWant want : wants.values()) {
      if (want.storing || now - want.lastAsk <= rebroadcast) {
        continue;
      }
      final Long heard = want.blockPeer == null ? null : lastHeard.get(want.blockPeer);
      if (heard != null && now - heard <= rebroadcast) {
        // The peer asked for the block is sending us messages: it is busy, not gone. Asking
        // again would only make it send the block twice.
        want.lastAsk = now;
        continue;
      }
      for (final PeerId asked : want.asked) {
        released(asked, want.cid.multihash());
      }
      want.asked.clear();
      want.dontHaves.clear();
      want.haves.clear();
      want.blockPeer = null;
      ask(want);
    }
  }

  // ---------------------------------------------------------------- receiving

  private void received(final PeerId peer, final BitswapFrameCodec.Decoded decoded) {
    messagesReceived.incrementAndGet();
    lastHeard.put(peer, System.nanoTime());
    if (decoded.rejectedBlocks() > 0) {
      rejected.computeIfAbsent(BitswapReject.BAD_BLOCK, r -> new AtomicLong())
          .addAndGet(decoded.rejectedBlocks());
    }
    final BitswapFrame frame = decoded.frame();
    bitswapPeerSeen(peer);
    if (host.connection(peer).isEmpty()) {
      return;
    }
    if (frame.full() || !frame.wants().isEmpty()) {
      updateLedger(state(peer), frame);
    }
    final PeerState known = peers.get(peer);
    if (known != null) {
      unpark(known);
    }
    for (final Presence presence : frame.presences()) {
      presence(peer, presence);
    }
    for (final Block block : frame.blocks()) {
      block(peer, block);
    }
  }

  private void updateLedger(final PeerState state, final BitswapFrame frame) {
    final boolean wasEmpty = state.ledger.isEmpty();
    if (frame.full()) {
      ledgerEntries.addAndGet(-state.ledger.size());
      state.ledger.clear();
      state.queue.clear();
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
        entry = new LedgerEntry(want.cid(), want.type(), want.sendDontHave());
        state.ledger.put(key, entry);
        ledgerEntries.incrementAndGet();
      } else {
        // WANT-BLOCK wins over WANT-HAVE; an update is looked at again.
        if (want.type() == WantType.BLOCK) {
          entry.type = WantType.BLOCK;
        }
        entry.sendDontHave = want.sendDontHave();
        entry.dontHaveSent = false;
      }
      if (!entry.queued) {
        entry.queued = true;
        state.queue.add(key);
      }
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

  private void requeueWaiting(final Multihash key) {
    for (final PeerState state : peers.values()) {
      final LedgerEntry entry = state.ledger.get(key);
      if (entry != null && !entry.queued) {
        entry.queued = true;
        state.queue.add(key);
        makeReady(state);
      }
    }
    schedule();
  }

  // ---------------------------------------------------------------- serving

  private void makeReady(final PeerState state) {
    if (!state.ready && !state.queue.isEmpty()) {
      state.ready = true;
      ready.add(state);
    }
  }

  private boolean canTakeTurn(final PeerState state) {
    return !state.loading && state.outbox.isEmpty()
        && (state.outbound == null || state.outbound.isWritable());
  }

  /** Starts turns for ready peers, round-robin, while loads are allowed. */
  private void schedule() {
    int looked = ready.size();
    while (loadsInFlight < config.maxConcurrentLoads() && looked-- > 0 && !ready.isEmpty()) {
      final PeerState state = ready.poll();
      state.ready = false;
      if (peers.get(state.peer) != state || state.queue.isEmpty()) {
        continue;
      }
      if (!canTakeTurn(state)) {
        // Comes back when its stream drains or opens (see drained/outboundOpened).
        continue;
      }
      startTurn(state);
    }
  }

  private void startTurn(final PeerState state) {
    final List<LedgerEntry> batch = new ArrayList<>();
    while (batch.size() < WANTS_PER_TURN && !state.queue.isEmpty()) {
      final Multihash key = state.queue.poll();
      final LedgerEntry entry = state.ledger.get(key);
      if (entry == null || !entry.queued) {
        continue;
      }
      entry.queued = false;
      batch.add(entry);
    }
    if (batch.isEmpty()) {
      return;
    }
    state.loading = true;
    loadsInFlight++;
    final int budget = config.bytesPerTurn();
    final int replaceHave = config.maxSizeReplaceHaveWithBlock();
    try {
      storage.execute(() -> {
        final List<Outcome> outcomes = new ArrayList<>();
        long bytes = 0;
        int done = 0;
        for (final LedgerEntry entry : batch) {
          if (bytes >= budget) {
            break;
          }
          done++;
          final Multihash key = entry.cid.multihash();
          try {
            if (entry.type == WantType.HAVE) {
              final Optional<Integer> size = blockstore.size(entry.cid);
              if (size.isPresent() && size.get() <= replaceHave) {
                final Optional<byte[]> data = blockstore.get(entry.cid);
                outcomes.add(new Outcome(key, entry.cid, data.orElse(null), data.isPresent()));
              } else {
                outcomes.add(new Outcome(key, entry.cid, null, size.isPresent()));
              }
            } else {
              final Optional<byte[]> data = blockstore.get(entry.cid);
              if (data.isPresent()) {
                bytes += data.get().length;
              }
              outcomes.add(new Outcome(key, entry.cid, data.orElse(null), data.isPresent()));
            }
          } catch (final RuntimeException e) {
            LOG.warn("bitswap: reading {} failed: {}", entry.cid, e.toString());
            outcomes.add(new Outcome(key, entry.cid, null, false));
          }
        }
        final List<LedgerEntry> rest = batch.subList(done, batch.size());
        onLoopAlways(() -> turnDone(state, outcomes, rest));
      });
    } catch (final RejectedExecutionException e) {
      turnDone(state, List.of(), batch);
    }
  }

  /** Like onLoop, but also after close (a turn must release its slot). */
  private void onLoopAlways(final Runnable task) {
    loop.execute(() -> {
      try {
        task.run();
      } catch (final RuntimeException e) {
        LOG.warn("bitswap task failed", e);
      }
    });
  }

  private void turnDone(final PeerState state, final List<Outcome> outcomes,
      final List<LedgerEntry> rest) {
    loadsInFlight--;
    state.loading = false;
    if (closed || peers.get(state.peer) != state) {
      schedule();
      return;
    }
    // Unlooked-at wants go back to the front, in order.
    for (int i = rest.size() - 1; i >= 0; i--) {
      final LedgerEntry entry = rest.get(i);
      final Multihash key = entry.cid.multihash();
      if (state.ledger.get(key) == entry && !entry.queued) {
        entry.queued = true;
        state.queue.addFirst(key);
      }
    }
    final List<Block> blocks = new ArrayList<>();
    final List<LedgerEntry> blockEntries = new ArrayList<>();
    final List<Presence> presences = new ArrayList<>();
    final List<LedgerEntry> haveEntries = new ArrayList<>();
    for (final Outcome outcome : outcomes) {
      final LedgerEntry entry = state.ledger.get(outcome.key());
      if (entry == null || entry.queued) {
        // Cancelled while we read, or asked again (looked at in a later turn).
        continue;
      }
      if (outcome.data() != null) {
        blocks.add(new Block(entry.cid, outcome.data()));
        blockEntries.add(entry);
        entry.sending = true;
      } else if (outcome.have()) {
        if (entry.type == WantType.BLOCK) {
          // Vanished between size() and get(): treat as absent below.
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
    sendServed(state, blocks, blockEntries, presences, haveEntries);
    makeReady(state);
    schedule();
  }

  /** The message serving {@code served} was written: those wants are done. */
  private void sent(final PeerState state, final List<LedgerEntry> served) {
    if (peers.get(state.peer) != state) {
      return;
    }
    for (final LedgerEntry entry : served) {
      final Multihash key = entry.cid.multihash();
      if (state.ledger.get(key) == entry && entry.sending) {
        entry.sending = false;
        if (!entry.queued) {
          removeEntry(state, key);
        }
      }
    }
  }

  /**
   * The message serving {@code served} was dropped or its write failed: the wants stay and are
   * looked at again (now, or on the peer's next message when {@code park}).
   */
  private void unsent(final PeerState state, final List<LedgerEntry> served,
      final boolean park) {
    if (served.isEmpty() || peers.get(state.peer) != state) {
      return;
    }
    for (final LedgerEntry entry : served) {
      if (state.ledger.get(entry.cid.multihash()) == entry && entry.sending) {
        entry.sending = false;
        if (park) {
          state.parked.add(entry);
        } else {
          requeue(state, entry);
        }
      }
    }
    if (!park) {
      makeReady(state);
      schedule();
    }
  }

  private static void requeue(final PeerState state, final LedgerEntry entry) {
    if (!entry.queued) {
      entry.queued = true;
      state.queue.add(entry.cid.multihash());
    }
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

  private void removeEntry(final PeerState state, final Multihash key) {
    if (state.ledger.remove(key) != null) {
      ledgerEntries.decrementAndGet();
      if (state.ledger.isEmpty()) {
        ledgerPeers.decrementAndGet();
      }
    }
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
        enqueue(state, new Outgoing(new BitswapFrame(List.of(), false, batch, List.of(), 0),
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
    enqueue(state, new Outgoing(new BitswapFrame(List.of(), false, batch, presences, 0),
        served));
  }

  // ---------------------------------------------------------------- client

  private void want(final Cid cid, final CompletableFuture<byte[]> waiter,
      final Duration timeout, final boolean store) {
    if (waiter.isDone()) {
      return;
    }
    final Multihash key = cid.multihash();
    ClientWant want = wants.get(key);
    if (want == null) {
      if (wants.size() >= config.maxClientWants()) {
        waiter.completeExceptionally(new IllegalStateException(
            "bitswap: too many blocks wanted at once (" + wants.size() + ")"));
        return;
      }
      want = new ClientWant(cid);
      want.store = store;
      wants.put(key, want);
      clientWants.incrementAndGet();
      want.waiters.add(waiter);
      ask(want);
    } else {
      want.waiters.add(waiter);
      want.store |= store;
    }
    final ClientWant owner = want;
    final ScheduledFuture<?> timer = loop.schedule(() -> waiter.completeExceptionally(
        new TimeoutException("bitswap: " + cid + " not received within " + timeout)),
        timeout.toMillis(), TimeUnit.MILLISECONDS);
    waiter.whenComplete((data, error) -> {
      timer.cancel(false);
      if (error != null) {
        onLoop(() -> waiterGone(key, owner, waiter));
      }
    });
  }

  private void waiterGone(final Multihash key, final ClientWant want,
      final CompletableFuture<byte[]> waiter) {
    want.waiters.remove(waiter);
    if (want.waiters.isEmpty() && !want.storing && wants.get(key) == want) {
      wants.remove(key);
      clientWants.decrementAndGet();
      for (final PeerId peer : want.asked) {
        released(peer, key);
        queueWant(peer, Want.cancel(want.cid));
      }
    }
  }

  /** Sends {@code want} to the peers not yet asked: WANT-BLOCK to one provider, HAVE to rest. */
  private void ask(final ClientWant want) {
    want.lastAsk = System.nanoTime();
    if (want.blockPeer == null) {
      final PeerId chosen = chooseBlockPeer(want);
      if (chosen != null) {
        want.blockPeer = chosen;
        want.asked.add(chosen);
        queueWant(chosen, Want.block(want.cid, true));
      }
    }
    for (final PeerId peer : bitswapPeers) {
      if (want.asked.add(peer)) {
        queueWant(peer, Want.have(want.cid, true));
      }
    }
  }

  /**
   * A peer to ask for the block itself: one that said HAVE, else the most recent provider, else
   * the only bitswap peer (no point in a HAVE round trip then).
   */
  private PeerId chooseBlockPeer(final ClientWant want) {
    for (final PeerId peer : want.haves) {
      if (!want.dontHaves.contains(peer) && bitswapPeers.contains(peer)) {
        return peer;
      }
    }
    PeerId best = null;
    for (final PeerId peer : providers.keySet()) {
      if (!want.dontHaves.contains(peer) && !want.asked.contains(peer)
          && bitswapPeers.contains(peer)) {
        best = peer;
      }
    }
    if (best == null && bitswapPeers.size() == 1) {
      final PeerId only = bitswapPeers.iterator().next();
      if (!want.dontHaves.contains(only) && !want.asked.contains(only)) {
        best = only;
      }
    }
    return best;
  }

  private void presence(final PeerId peer, final Presence presence) {
    final ClientWant want = wants.get(presence.cid().multihash());
    if (want == null || want.storing) {
      return;
    }
    if (presence.have()) {
      want.haves.add(peer);
      touchProvider(peer);
      if (want.blockPeer == null) {
        want.blockPeer = peer;
        want.lastAsk = System.nanoTime();
        queueWant(peer, Want.block(want.cid, true));
      }
    } else {
      released(peer, presence.cid().multihash());
      want.dontHaves.add(peer);
      want.haves.remove(peer);
      if (peer.equals(want.blockPeer)) {
        want.blockPeer = null;
        final PeerId next = chooseBlockPeer(want);
        if (next != null) {
          want.blockPeer = next;
          want.asked.add(next);
          queueWant(next, Want.block(want.cid, true));
        }
      }
    }
  }

  private void touchProvider(final PeerId peer) {
    providers.remove(peer);
    providers.put(peer, System.nanoTime());
    if (providers.size() > 64) {
      providers.remove(providers.keySet().iterator().next());
    }
  }

  private void block(final PeerId peer, final Block block) {
    final Multihash key = block.cid().multihash();
    released(peer, key);
    final ClientWant want = wants.get(key);
    if (want == null || want.storing) {
      if (want != null || recent.contains(key)) {
        duplicateBlocks.incrementAndGet();
      } else {
        unwantedBlocks.incrementAndGet();
      }
      return;
    }
    want.storing = true;
    touchProvider(peer);
    blocksReceived.incrementAndGet();
    bytesReceived.addAndGet(block.data().length);
    recent.add(key);
    for (final PeerId asked : want.asked) {
      released(asked, key);
      // Not to the sender: servers drop a want once they sent its block, and a message to a
      // busy Helia 5 makes it send again every block still in its queue (duplicates).
      if (!asked.equals(peer)) {
        queueWant(asked, Want.cancel(want.cid));
      }
    }
    if (!want.store) {
      stored(key, want, block.data(), null, false);
      return;
    }
    try {
      storage.execute(() -> {
        Throwable failure = null;
        try {
          blockstore.put(want.cid, block.data());
        } catch (final RuntimeException e) {
          failure = e;
        }
        final Throwable error = failure;
        onLoopAlways(() -> stored(key, want, block.data(), error, true));
      });
    } catch (final RejectedExecutionException e) {
      stored(key, want, block.data(), e, true);
    }
  }

  private void stored(final Multihash key, final ClientWant want, final byte[] data,
      final Throwable error, final boolean kept) {
    if (wants.get(key) == want) {
      wants.remove(key);
      clientWants.decrementAndGet();
    }
    for (final CompletableFuture<byte[]> waiter : List.copyOf(want.waiters)) {
      if (error == null) {
        waiter.complete(data);
      } else {
        waiter.completeExceptionally(error);
      }
    }
    if (error == null && kept && !closed) {
      requeueWaiting(key);
    }
  }

  // ---------------------------------------------------------------- sending

  private void queueWant(final PeerId peer, final Want want) {
    final PeerState state = state(peer);
    state.wantBuffer.add(want);
    scheduleFlush(state);
  }

  /** {@code peer} no longer owes us {@code key}; held wants go out once it owes nothing. */
  private void released(final PeerId peer, final Multihash key) {
    final PeerState state = peers.get(peer);
    if (state != null && state.awaiting.remove(key) && state.awaiting.isEmpty()
        && !state.wantBuffer.isEmpty()) {
      scheduleFlush(state);
    }
  }

  private void scheduleFlush(final PeerState state) {
    if (state.flushScheduled) {
      return;
    }
    state.flushScheduled = true;
    loop.execute(() -> {
      state.flushScheduled = false;
      if (closed || peers.get(state.peer) != state || state.wantBuffer.isEmpty()) {
        return;
      }
      if (!state.awaiting.isEmpty()) {
        final long now = System.nanoTime();
        if (state.heldSince == 0) {
          state.heldSince = now;
          loop.schedule(() -> onLoop(() -> scheduleFlush(state)), MAX_HOLD_NANOS,
              TimeUnit.NANOSECONDS);
          return;
        }
        if (now - state.heldSince < MAX_HOLD_NANOS) {
          return;
        }
      }
      state.heldSince = 0;
      List<Want> batch = new ArrayList<>();
      for (final Want want : state.wantBuffer) {
        final Multihash key = want.cid().multihash();
        if (want.cancel()) {
          state.awaiting.remove(key);
        } else if (want.type() == WantType.BLOCK && wants.containsKey(key)) {
          state.awaiting.add(key);
        }
        batch.add(want);
        if (batch.size() == WANTS_PER_MESSAGE) {
          enqueue(state, new Outgoing(new BitswapFrame(batch, false, List.of(), List.of(), 0),
              List.of()));
          batch = new ArrayList<>();
        }
      }
      state.wantBuffer.clear();
      if (!batch.isEmpty()) {
        enqueue(state, new Outgoing(new BitswapFrame(batch, false, List.of(), List.of(), 0),
            List.of()));
      }
    });
  }

  private void enqueue(final PeerState state, final Outgoing outgoing) {
    if (outgoing.frame().isEmpty()) {
      return;
    }
    if (state.outbound != null && state.outbox.isEmpty() && state.outbound.isWritable()) {
      write(state, outgoing);
      return;
    }
    if (state.outbox.size() >= config.maxOutboxMessages()) {
      // The peer does not read: the oldest message goes (wants are re-sent by the ticker, the
      // wants it served stay in the ledger and are served again once the peer reads).
      final Outgoing dropped = state.outbox.poll();
      reject(BitswapReject.SEND_QUEUE_FULL);
      unsent(state, dropped.served(), false);
    }
    state.outbox.add(outgoing);
    ensureOutbound(state);
  }

  private void write(final PeerState state, final Outgoing outgoing) {
    final BitswapFrame frame = outgoing.frame();
    final byte[] body = codec.encode(frame, state.version);
    // State first: the write may fire channelWritabilityChanged synchronously.
    state.lastUse = System.nanoTime();
    messagesSent.incrementAndGet();
    for (final Block block : frame.blocks()) {
      blocksSent.incrementAndGet();
      bytesSent.addAndGet(block.data().length);
    }
    final Channel channel = state.outbound;
    final List<LedgerEntry> served = outgoing.served();
    channel.writeAndFlush(Unpooled.wrappedBuffer(body)).addListener(f -> {
      if (f.isSuccess()) {
        if (!served.isEmpty()) {
          onLoopAlways(() -> sent(state, served));
        }
      } else {
        reject(BitswapReject.SEND_FAILED);
        LOG.debug("bitswap write to {} failed: {}", state.peer, f.cause().toString());
        onLoopAlways(() -> unsent(state, served, false));
      }
    });
  }

  private void drained(final PeerState state, final Channel channel) {
    if (state.outbound != channel || peers.get(state.peer) != state) {
      return;
    }
    while (!state.outbox.isEmpty() && channel.isWritable()) {
      write(state, state.outbox.poll());
    }
    if (state.outbox.isEmpty()) {
      makeReady(state);
      schedule();
    }
  }

  private void ensureOutbound(final PeerState state) {
    if (state.outbound != null || state.opening || closed) {
      return;
    }
    final Optional<Connection> connection = host.connection(state.peer);
    if (connection.isEmpty()) {
      dropOutbox(state);
      return;
    }
    state.opening = true;
    connection.get().newStream(BitswapProtocol.PROTOCOL_IDS, (stream, protocol) -> {
      stream.pipeline().addLast("bitswap-frame-encoder", UvarintFrameEncoder.INSTANCE);
      stream.pipeline().addLast("bitswap-out", new WriteOnlyStreamHandler("bitswap",
          channel -> onLoop(() -> drained(state, channel)),
          channel -> onLoopAlways(() -> outboundEnded(state, channel))));
    }).whenComplete((stream, error) -> onLoopAlways(() -> {
      state.opening = false;
      if (closed || peers.get(state.peer) != state) {
        if (stream != null) {
          stream.channel().close();
        }
        return;
      }
      if (error != null || !stream.channel().isActive()) {
        state.failedOpens++;
        reject(BitswapReject.STREAM_OPEN_FAILED);
        LOG.debug("bitswap stream to {} failed: {}", state.peer,
            error == null ? "closed at once" : error.toString());
        if (state.failedOpens >= MAX_OPEN_ATTEMPTS) {
          // Give up on what is queued; what it served waits for the peer's next message.
          dropOutbox(state);
          state.failedOpens = 0;
        } else {
          loop.schedule(() -> onLoop(() -> ensureOutbound(state)), 200L * state.failedOpens,
              TimeUnit.MILLISECONDS);
        }
        return;
      }
      state.failedOpens = 0;
      state.version = BitswapProtocol.Version.of(stream.protocol());
      state.outbound = stream.channel();
      state.lastUse = System.nanoTime();
      drained(state, stream.channel());
    }));
  }

  /** Drops every queued message; the wants they served are parked in the ledger. */
  private void dropOutbox(final PeerState state) {
    while (!state.outbox.isEmpty()) {
      unsent(state, state.outbox.poll().served(), true);
    }
  }

  private void outboundEnded(final PeerState state, final Channel channel) {
    if (state.outbound != channel) {
      return;
    }
    state.outbound = null;
    if (!closed && peers.get(state.peer) == state
        && (!state.outbox.isEmpty() || !state.queue.isEmpty())) {
      ensureOutbound(state);
    }
  }
}
