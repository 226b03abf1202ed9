package io.relaypinner.ipfs.bitswap;

import io.relaypinner.multiformats.PeerId;
import java.util.function.Predicate;

/**
 * Decides which peer's wants the bitswap server reads next and how many block bytes that turn may
 * read. {@link BitswapEngine} uses {@link DeficitRoundRobin}; the interface exists so a test can
 * run the engine on another order and show what that would break.
 */
interface TurnScheduler {
  /** A turn for {@code peer}: read its wants until {@code budget} block bytes are read. */
  record Grant(PeerId peer, long budget) {}

  /** {@code peer} has wants to look at (idempotent). */
  void ready(PeerId peer);

  /**
   * The next turn, or null when no ready peer can take one. A ready peer that {@code canTakeTurn}
   * rejects leaves the rotation until it is {@link #ready} again.
   */
  Grant next(Predicate<PeerId> canTakeTurn);

  /** The turn of {@code peer} read {@code bytes}; {@code more}: wants are left to look at. */
  void done(PeerId peer, long bytes, boolean more);

  /** Forgets {@code peer}. */
  void remove(PeerId peer);
}
