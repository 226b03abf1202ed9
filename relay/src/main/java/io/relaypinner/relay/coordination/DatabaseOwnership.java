package io.relaypinner.relay.coordination;

import io.relaypinner.ipfs.datastore.Fence;
import java.util.Optional;
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

  /**
   * This relay follows {@code name} only to stand by (it heard of it from another relay, none of
   * its own peers uses it): it takes the lease only once it has stood by for a lease's time to
   * live, so the relay whose peers write the database gets it first, and a standby takes it over
   * when that relay dies. A later {@link #want} keeps it standing by.
   */
  void standBy(String name);

  /** Whether this relay follows {@code name} (wanted or standing by). */
  boolean wants(String name);

  /** This relay no longer follows {@code name}; a lease it holds is given up. */
  void drop(String name);

  /** Whether this relay may replicate {@code name} now. */
  boolean owns(String name);

  /**
   * Until when (clock millis) {@link #owns} stays true for {@code name} as far as is known now
   * (a lease's end before its renewal), a past instant when it is not owned: an owner that waits
   * for events looks again then. The default suits an ownership that changes only when asked:
   * for ever while owned.
   */
  default long ownedUntil(final String name) {
    return owns(name) ? Long.MAX_VALUE : Long.MIN_VALUE;
  }

  /**
   * The fencing token of {@code name} while this relay owns it ({@link #owns}), empty when it
   * does not: writes that must be the owner's alone (the shared heads of a log, its sync
   * history, the GC leader's deletes) carry it, and a shared store refuses them once another
   * relay took the lease over, however long this relay paused between the check and the write.
   */
  Optional<Fence> fence(String name);

  /** Called (on a coordination thread) with each name this relay newly owns. */
  void onAcquired(Consumer<String> listener);
}
