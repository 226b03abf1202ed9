package io.relaypinner.relay.coordination;

import java.util.List;
import java.util.function.BiConsumer;

/**
 * Tells the other relays on the shared stores that a database's heads changed, and hears what
 * they tell, so that a relay that does not replicate a database still answers readers with its
 * current heads (it joins them from the shared stores, no network). Announcements are hints: a
 * lost one costs a delay until the next one or the next sync, never data. With the embedded
 * stores there is nobody to tell ({@link Coordination#local()}).
 */
public interface HeadsAnnouncer {
  /**
   * Tells the others that {@code address}'s heads are now {@code heads} (CID strings).
   *
   * @param epoch the epoch of this relay's lease on {@code address} when it owns it
   *     ({@link DatabaseOwnership#fence}), 0 when it does not: the others drop an owner's
   *     announcement older than one they heard from a later owner
   */
  void announce(String address, List<String> heads, long epoch);

  /**
   * Called (on a coordination thread) with what another relay announced, except what a former
   * owner announced after a later owner did (a lower epoch than the highest heard).
   */
  void onAnnounced(BiConsumer<String, List<String>> listener);
}
