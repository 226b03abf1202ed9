package io.relaypinner.relay.storage;

import io.relaypinner.ipfs.datastore.Datastore;
import io.relaypinner.multiformats.Multihash;
import io.relaypinner.orbitdb.log.LogStore;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * The entries replicated OrbitDB logs list as theirs, for garbage collection to keep even while
 * they are not pinned: an entry whose payload links media is pinned only once its media is, and
 * until then only the log's membership says it belongs. What a stored log lists, in every
 * layout and every relay's state of it on shared stores, is read through
 * {@link LogStore#forEachMember(Datastore, java.util.function.Consumer)}, which owns the log's
 * datastore layout, a page of records at a time (so the heap holds one page, however many
 * entries are replicated), in an order that a log converted between layouts meanwhile cannot
 * hide its entries from. Only the entry blocks are kept, not what they link (their identities
 * are pinned when the entry is accepted, their media by its own pin).
 */
public final class LogMembers implements KeptBlocks {
  private final Datastore datastore;

  public LogMembers(final Datastore datastore) {
    this.datastore = Objects.requireNonNull(datastore, "datastore");
  }

  /**
   * Every listed entry's multihash, as the logs are read (unreadable records are skipped: their
   * entries go at GC).
   */
  @Override
  public void forEach(final Consumer<Multihash> visitor) {
    LogStore.forEachMember(datastore, cid -> visitor.accept(cid.multihash()));
  }
}
