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
  /** Tells the others that {@code address}'s heads are now {@code heads} (CID strings). */
  void announce(String address, List<String> heads);

  /** Called (on a coordination thread) with what another relay announced. */
  void onAnnounced(BiConsumer<String, List<String>> listener);
}
