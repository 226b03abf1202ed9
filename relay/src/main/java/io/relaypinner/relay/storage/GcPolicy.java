package io.relaypinner.relay.storage;

/**
 * Whether this node may collect garbage now. Of the relays sharing stores (S3 and PostgreSQL)
 * only one sweeps at a time: the GC-leader lease plugs in here
 * ({@code Coordination.gcPolicy()}). The default always may.
 */
@FunctionalInterface
public interface GcPolicy {
  /** Collect on every node (stores of one's own). */
  GcPolicy ALWAYS = () -> true;

  /**
   * Whether a GC run may start now; a false answer skips the run (counted). Asked again before
   * each delete when {@link #sharedStores()}: cheap (no round trip).
   */
  boolean mayCollect();

  /**
   * Whether other nodes write to the same block store and pins. Then {@link StorageGc} takes no
   * shortcut: an unpinned block (also one the gateway cache evicted) goes only once an
   * <em>earlier</em> run saw it unpinned at least the grace period ago (a second look, whatever
   * the grace), and a run that loses the permission mid-way stops deleting.
   */
  default boolean sharedStores() {
    return false;
  }

  /**
   * Runs one page of deletes ({@code PinStore.DELETE_PAGE} blocks). The GC leader of relays
   * sharing the stores runs it in a PostgreSQL transaction that holds its lease's row at its
   * epoch, so the page is deleted strictly before another relay takes the leadership over;
   * throws (the run ends) when the lease was taken over meanwhile. This default runs it.
   */
  default void aroundDeletes(final Runnable page) {
    page.run();
  }
}
