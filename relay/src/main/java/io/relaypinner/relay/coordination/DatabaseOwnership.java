package io.relaypinner.relay.coordination;

import java.util.function.Consumer;

/**
 * Which relay replicates a followed database (issue 24): at most one at a time among the relays
 * on one set of shared stores. A relay says which databases it follows ({@link #want}); it owns
 * some of them ({@link #owns}); when it gets one (at start, or taken over from a relay that died)
 * the {@link #onAcquired} listener hears it. With the embedded stores the one relay owns every
 * database it wants ({@link Coordination#local()}).
 */
public interface DatabaseOwnership {
  /** This relay follows {@code name} and takes it whenever no other relay holds it. */
  void want(String name);

  /** This relay no longer follows {@code name}; a lease it holds is given up. */
  void drop(String name);

  /** Whether this relay may replicate {@code name} now. */
  boolean owns(String name);

  /** Called (on a coordination thread) with each name this relay newly owns. */
  void onAcquired(Consumer<String> listener);
}
