package io.relaypinner.ipfs.bitswap;

import io.relaypinner.common.Backoff;
import io.relaypinner.ipfs.bitswap.BitswapFrame.Block;
import io.relaypinner.ipfs.bitswap.BitswapFrame.Presence;
import io.relaypinner.ipfs.bitswap.BitswapFrame.Want;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multihash;
import io.relaypinner.multiformats.PeerId;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Our own wants (the bitswap client of {@link BitswapEngine}): one want per CID however many
 * callers wait for it, WANT-BLOCK to one likely provider and WANT-HAVE to the other peers, the
 * next provider on DONT_HAVE, re-asking unanswered wants with a back-off (the interval doubles per
 * round without an answer, up to 8 times; not while the peer asked for the block is still
 * answering our other wants), and each caller's own timeout. No Netty types; time from the
 * injected clock; confined to the engine's thread.
 */
final class WantManager {
  /** Received multihashes remembered to tell duplicates from unwanted blocks. */
  private static final int RECENT_BLOCKS = 8_192;
  /** Providers (peers that recently had blocks for us) remembered. */
  private static final int MAX_PROVIDERS = 64;
  /** The rebroadcast interval doubles per unanswered round up to this many times. */
  private static final int MAX_BACKOFF_SHIFT = 3;

  /** What the manager asks of the engine. */
  interface Sink {
    /** Queue {@code want} (or a cancel) for {@code peer}. */
    void sendWant(PeerId peer, Want want);

    /** {@code peer} no longer owes us the block of {@code key}. */
    void released(PeerId peer, Multihash key);

    /** Write a received block to the blockstore; reply with {@link #stored}. */
    void store(Cid cid, byte[] data);

    /** A wanted block is now in the blockstore: peers waiting for it can be served. */
    void blockKept(Multihash key);
  }

  private record Waiter(CompletableFuture<byte[]> future, long deadlineMillis,
      Duration timeout) {}

  /** One CID we are fetching. */
  private static final class ClientWant {
    private final Cid cid;
    private final List<Waiter> waiters = new ArrayList<>();
    private final Set<PeerId> asked = new HashSet<>();
    private final Set<PeerId> haves = new LinkedHashSet<>();
    private final Set<PeerId> dontHaves = new HashSet<>();
    private PeerId blockPeer;
    private long lastAskMillis;
    private int rounds;
    private boolean storing;
    /** Whether a received block goes into the blockstore (some waiter came through get()). */
    private boolean store;
    private byte[] data;

    ClientWant(final Cid cid) {
      this.cid = cid;
    }
  }

  private final BitswapConfig config;
  /** How long an unanswered want waits before it is asked again, by rounds asked. */
  private final Backoff rebroadcast;
  private final Clock clock;
  private final Sink sink;
  /** The engine's bitswap peers (a live view, in connection order). */
  private final Set<PeerId> peers;
  private final Map<Multihash, ClientWant> wants = new HashMap<>();
  /**
   * When each bitswap peer last answered one of our wants (a block or a presence for it). A
   * message carrying only the peer's own wants does not count: it says nothing about ours.
   */
  private final Map<PeerId, Long> lastAnswered = new HashMap<>();
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
  final AtomicLong blocksReceived = new AtomicLong();
  final AtomicLong bytesReceived = new AtomicLong();
  final AtomicLong duplicateBlocks = new AtomicLong();
  final AtomicLong unwantedBlocks = new AtomicLong();
  final AtomicLong clientWants = new AtomicLong();

  WantManager(final BitswapConfig config, final Clock clock, final Sink sink,
      final Set<PeerId> peers) {
    this.config = config;
    this.clock = clock;
    this.sink = sink;
    this.peers = peers;
    final long base = config.rebroadcastInterval().toMillis();
    this.rebroadcast = Backoff.of(Duration.ofMillis(base),
        Duration.ofMillis(base << MAX_BACKOFF_SHIFT));
  }

  /** Whether a block of {@code key} is wanted and not yet received. */
  boolean isOpen(final Multihash key) {
    final ClientWant want = wants.get(key);
    return want != null && !want.storing;
  }

  /**
   * Adds {@code waiter} to the want of {@code cid} (created and sent when new); it fails with
   * {@link TimeoutException} once {@code timeout} has passed ({@link #tick}).
   */
  void want(final Cid cid, final CompletableFuture<byte[]> waiter, final Duration timeout,
      final boolean store) {
    if (waiter.isDone()) {
      return;
    }
    final Multihash key = cid.multihash();
    final long deadline = clock.millis() + Math.max(0, Math.min(timeout.toMillis(),
        Long.MAX_VALUE / 4));
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
      want.waiters.add(new Waiter(waiter, deadline, timeout));
      ask(want);
    } else {
      want.waiters.add(new Waiter(waiter, deadline, timeout));
      want.store |= store;
    }
  }

  /** {@code waiter} gave up (cancelled or failed): the want goes when nobody else waits. */
  void waiterGone(final Multihash key, final CompletableFuture<byte[]> waiter) {
    final ClientWant want = wants.get(key);
    if (want == null) {
      return;
    }
    want.waiters.removeIf(w -> w.future() == waiter);
    dropIfUnwanted(key, want);
  }

  private void dropIfUnwanted(final Multihash key, final ClientWant want) {
    if (want.waiters.isEmpty() && !want.storing && wants.get(key) == want) {
      wants.remove(key);
      clientWants.decrementAndGet();
      for (final PeerId peer : want.asked) {
        sink.released(peer, key);
        sink.sendWant(peer, Want.cancel(want.cid));
      }
    }
  }

  /** A new bitswap peer: it gets every want we have open. */
  void peerAdded(final PeerId peer) {
    for (final ClientWant want : wants.values()) {
      if (!want.storing && want.asked.add(peer)) {
        sink.sendWant(peer, Want.have(want.cid, true));
      }
    }
  }

  void peerRemoved(final PeerId peer) {
    lastAnswered.remove(peer);
    providers.remove(peer);
    for (final ClientWant want : wants.values()) {
      want.asked.remove(peer);
      want.haves.remove(peer);
      if (peer.equals(want.blockPeer)) {
        want.blockPeer = null;
        if (!want.storing) {
          ask(want);
        }
      }
    }
  }

  private void answered(final PeerId peer) {
    lastAnswered.put(peer, clock.millis());
  }

  /**
   * A message naming {@code sent} never reached {@code peer} (dropped or failed): those of our
   * wants it asked for are asked again at the next tick the first time (then at the back-off's
   * pace), even while the peer is busy with our other wants, since it never saw these.
   */
  void undelivered(final PeerId peer, final List<Want> sent) {
    for (final Want w : sent) {
      if (w.cancel()) {
        continue;
      }
      final Multihash key = w.cid().multihash();
      final ClientWant want = wants.get(key);
      if (want == null || want.storing || !want.asked.remove(peer)) {
        continue;
      }
      sink.released(peer, key);
      want.haves.remove(peer);
      // No block peer now (if it was this one): the busy rule of tick() cannot hold it back.
      if (peer.equals(want.blockPeer)) {
        want.blockPeer = null;
      }
      if (want.rounds == 0) {
        want.lastAskMillis = Long.MIN_VALUE / 4;
      }
    }
  }

  /** Sends {@code want} to the peers not yet asked: WANT-BLOCK to one provider, HAVE to rest. */
  private void ask(final ClientWant want) {
    want.lastAskMillis = clock.millis();
    if (want.blockPeer == null) {
      final PeerId chosen = chooseBlockPeer(want);
      if (chosen != null) {
        want.blockPeer = chosen;
        want.asked.add(chosen);
        sink.sendWant(chosen, Want.block(want.cid, true));
      }
    }
    for (final PeerId peer : peers) {
      if (want.asked.add(peer)) {
        sink.sendWant(peer, Want.have(want.cid, true));
      }
    }
  }

  /**
   * A peer to ask for the block itself: one that said HAVE, else the most recent provider, else
   * the only bitswap peer (no point in a HAVE round trip then).
   */
  private PeerId chooseBlockPeer(final ClientWant want) {
    for (final PeerId peer : want.haves) {
      if (!want.dontHaves.contains(peer) && peers.contains(peer)) {
        return peer;
      }
    }
    PeerId best = null;
    for (final PeerId peer : providers.keySet()) {
      if (!want.dontHaves.contains(peer) && !want.asked.contains(peer)
          && peers.contains(peer)) {
        best = peer;
      }
    }
    if (best == null && peers.size() == 1) {
      final PeerId only = peers.iterator().next();
      if (!want.dontHaves.contains(only) && !want.asked.contains(only)) {
        best = only;
      }
    }
    return best;
  }

  void presence(final PeerId peer, final Presence presence) {
    final ClientWant want = wants.get(presence.cid().multihash());
    if (want == null || want.storing) {
      return;
    }
    answered(peer);
    want.rounds = 0;
    if (presence.have()) {
      want.haves.add(peer);
      touchProvider(peer);
      if (want.blockPeer == null) {
        want.blockPeer = peer;
        want.lastAskMillis = clock.millis();
        sink.sendWant(peer, Want.block(want.cid, true));
      }
    } else {
      sink.released(peer, presence.cid().multihash());
      want.dontHaves.add(peer);
      want.haves.remove(peer);
      if (peer.equals(want.blockPeer)) {
        want.blockPeer = null;
        final PeerId next = chooseBlockPeer(want);
        if (next != null) {
          want.blockPeer = next;
          want.asked.add(next);
          sink.sendWant(next, Want.block(want.cid, true));
        }
      }
    }
  }

  private void touchProvider(final PeerId peer) {
    providers.remove(peer);
    providers.put(peer, clock.millis());
    if (providers.size() > MAX_PROVIDERS) {
      providers.remove(providers.keySet().iterator().next());
    }
  }

  void block(final PeerId peer, final Block block) {
    final Multihash key = block.cid().multihash();
    sink.released(peer, key);
    final ClientWant want = wants.get(key);
    if (want == null || want.storing) {
      if (want != null || recent.contains(key)) {
        // Not an answer to an open want: a peer cannot keep itself "busy" with duplicates.
        duplicateBlocks.incrementAndGet();
      } else {
        unwantedBlocks.incrementAndGet();
      }
      return;
    }
    want.storing = true;
    answered(peer);
    touchProvider(peer);
    blocksReceived.incrementAndGet();
    bytesReceived.addAndGet(block.data().length);
    recent.add(key);
    for (final PeerId asked : want.asked) {
      sink.released(asked, key);
      // Not to the sender: servers drop a want once they sent its block, and a message to a
      // busy Helia 5 makes it send again every block still in its queue (duplicates).
      if (!asked.equals(peer)) {
        sink.sendWant(asked, Want.cancel(want.cid));
      }
    }
    if (!want.store) {
      finish(key, want, block.data(), null);
      return;
    }
    want.data = block.data();
    sink.store(want.cid, block.data());
  }

  /** The blockstore write of a received block finished ({@code error} null: it is kept). */
  void stored(final Multihash key, final Throwable error) {
    final ClientWant want = wants.get(key);
    if (want == null || !want.storing || want.data == null) {
      return;
    }
    finish(key, want, want.data, error);
    if (error == null) {
      sink.blockKept(key);
    }
  }

  private void finish(final Multihash key, final ClientWant want, final byte[] data,
      final Throwable error) {
    if (wants.get(key) == want) {
      wants.remove(key);
      clientWants.decrementAndGet();
    }
    want.data = null;
    for (final Waiter waiter : List.copyOf(want.waiters)) {
      if (error == null) {
        waiter.future().complete(data);
      } else {
        waiter.future().completeExceptionally(error);
      }
    }
  }

  /** Fails waiters past their deadline and asks again for wants nobody answered. */
  void tick() {
    final long now = clock.millis();
    final List<Waiter> expired = new ArrayList<>();
    final List<Cid> expiredCids = new ArrayList<>();
    final List<ClientWant> touched = new ArrayList<>();
    for (final ClientWant want : wants.values()) {
      boolean any = false;
      for (final Waiter waiter : want.waiters) {
        if (now >= waiter.deadlineMillis()) {
          expired.add(waiter);
          expiredCids.add(want.cid);
          any = true;
        }
      }
      if (any) {
        touched.add(want);
      }
    }
    // Outside the iteration: completing a waiter runs its callbacks.
    for (final ClientWant want : touched) {
      want.waiters.removeIf(waiter -> now >= waiter.deadlineMillis());
      dropIfUnwanted(want.cid.multihash(), want);
    }
    for (int i = 0; i < expired.size(); i++) {
      expired.get(i).future().completeExceptionally(new TimeoutException("bitswap: "
          + expiredCids.get(i) + " not received within " + expired.get(i).timeout()));
    }
    final long base = config.rebroadcastInterval().toMillis();
    for (final ClientWant want : wants.values()) {
      final long interval = rebroadcast.delayMillis(want.rounds + 1);
      if (want.storing || now - want.lastAskMillis < interval) {
        continue;
      }
      final Long answered = want.blockPeer == null ? null : lastAnswered.get(want.blockPeer);
      if (answered != null && now - answered < base) {
        // The peer asked for the block is still sending us blocks or presences for our wants:
        // it is busy, not gone. Asking again would only make it send the block twice. (A peer
        // that only sends its own wants is asked again: it may have lost ours.) Due again one
        // interval after its last answer.
        want.lastAskMillis = answered;
        continue;
      }
      want.rounds++;
      for (final PeerId asked : want.asked) {
        sink.released(asked, want.cid.multihash());
      }
      want.asked.clear();
      want.dontHaves.clear();
      want.haves.clear();
      want.blockPeer = null;
      ask(want);
    }
  }

  /** Fails every waiter with {@code error} and forgets all wants. */
  void closeAll(final RuntimeException error) {
    final List<Waiter> all = new ArrayList<>();
    for (final ClientWant want : wants.values()) {
      all.addAll(want.waiters);
    }
    wants.clear();
    clientWants.set(0);
    for (final Waiter waiter : all) {
      waiter.future().completeExceptionally(error);
    }
  }

  int size() {
    return wants.size();
  }
}
