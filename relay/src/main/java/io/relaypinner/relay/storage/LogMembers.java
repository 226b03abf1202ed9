package io.relaypinner.relay.storage;

import io.relaypinner.ipfs.dagcbor.DagCbor;
import io.relaypinner.ipfs.dagcbor.DagCborException;
import io.relaypinner.ipfs.dagcbor.DagCborValue;
import io.relaypinner.ipfs.datastore.Datastore;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multihash;
import io.relaypinner.multiformats.MultiformatException;
import java.util.HashSet;
import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;

/**
 * The entries replicated OrbitDB logs list as theirs, for garbage collection to keep even while
 * they are not pinned: an entry whose payload links media is pinned only once its media is, and
 * until then only the log's membership (persisted by {@code OrbitDbLog} under {@code
 * /orbitdb/logs/<manifest>/e/<CID>}, a marker per verified entry, also under
 * {@code .../r/<node>/e/<CID>} when relays share the datastore; and the earlier layouts
 * {@code .../batches/<first CID>}, a dag-cbor list of CID strings, and {@code .../entries/<CID>})
 * says it belongs. Only the entry blocks are kept, not what they
 * link (their identities are pinned when the entry is accepted, their media by its own pin).
 */
public final class LogMembers implements Supplier<Set<Multihash>> {
  static final String PREFIX = "/orbitdb/logs/";

  private final Datastore datastore;

  public LogMembers(final Datastore datastore) {
    this.datastore = Objects.requireNonNull(datastore, "datastore");
  }

  /** Every listed entry's multihash (unreadable records are skipped: their entries go at GC). */
  @Override
  public Set<Multihash> get() {
    final Set<Multihash> members = new HashSet<>();
    for (final Datastore.Entry record : datastore.scan(PREFIX)) {
      final String key = record.key();
      final int entries = key.indexOf("/entries/", PREFIX.length());
      if (key.indexOf("/e/", PREFIX.length()) >= 0) {
        // A verified entry's marker (.../e/<CID>, under a node's scope on shared stores).
        add(members, key.substring(key.lastIndexOf('/') + 1));
      } else if (entries >= 0) {
        add(members, key.substring(entries + "/entries/".length()));
      } else if (key.indexOf("/batches/", PREFIX.length()) >= 0) {
        try {
          for (final DagCborValue item : DagCbor.decode(record.value()).asList().items()) {
            add(members, item.asText());
          }
        } catch (final DagCborException e) {
          continue;
        }
      }
    }
    return members;
  }

  private static void add(final Set<Multihash> members, final String text) {
    try {
      members.add(Cid.parse(text).multihash());
    } catch (final MultiformatException e) {
      // Not a CID: nothing to keep.
    }
  }
}
