package io.relaypinner.ipfs.bitswap;

import io.relaypinner.multiformats.PeerId;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * Deficit round robin by block bytes (Shreedhar and Varghese, "Efficient fair queuing using
 * deficit round robin", 1995): each round a ready peer is credited {@code quantum} bytes and its
 * turn reads blocks while its credit lasts. A turn may overshoot by one block (sizes are known only
 * once read); the overshoot is owed and repaid in later rounds, so over time every peer with
 * wants gets the same share of bytes whatever its block sizes, and a peer asking for one small
 * block waits at most one round of the others' quanta, never behind a greedy peer's whole list.
 * Credit is capped at twice the quantum (a peer whose turns end on the want count, not the byte
 * budget, cannot save up a burst) and debt at twice the quantum; a peer with nothing left to look
 * at starts from zero.
 */
final class DeficitRoundRobin implements TurnScheduler {
  private final long quantum;
  private final ArrayDeque<PeerId> active = new ArrayDeque<>();
  private final Set<PeerId> queued = new HashSet<>();
  private final Map<PeerId, Long> deficit = new HashMap<>();

  DeficitRoundRobin(final long quantum) {
    if (quantum < 1) {
      throw new IllegalArgumentException("quantum must be positive: " + quantum);
    }
    this.quantum = quantum;
  }

  @Override
  public void ready(final PeerId peer) {
    if (queued.add(peer)) {
      active.add(peer);
    }
  }

  @Override
  public Grant next(final Predicate<PeerId> canTakeTurn) {
    // A peer in debt gets a quantum per visit; with debt capped at 2 quanta, 3 visits suffice.
    int visits = 4 * active.size();
    while (visits-- > 0 && !active.isEmpty()) {
      final PeerId peer = active.poll();
      queued.remove(peer);
      if (!canTakeTurn.test(peer)) {
        continue;
      }
      final long credit = Math.min(deficit.getOrDefault(peer, 0L) + quantum, 2 * quantum);
      deficit.put(peer, credit);
      if (credit <= 0) {
        ready(peer);
        continue;
      }
      return new Grant(peer, credit);
    }
    return null;
  }

  @Override
  public void done(final PeerId peer, final long bytes, final boolean more) {
    if (!more) {
      deficit.remove(peer);
      return;
    }
    final long left = deficit.getOrDefault(peer, 0L) - bytes;
    deficit.put(peer, Math.max(left, -2 * quantum));
    ready(peer);
  }

  @Override
  public void remove(final PeerId peer) {
    if (queued.remove(peer)) {
      active.remove(peer);
    }
    deficit.remove(peer);
  }
}
