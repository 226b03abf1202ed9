package io.relaypinner.ipfs.unixfs;

import io.relaypinner.multiformats.Cid;
import java.util.Objects;
import java.util.Optional;

/**
 * One named entry of a UnixFS directory (plain or HAMT-sharded, with the shard prefix removed).
 *
 * @param name the entry name
 * @param cid the entry's root block
 * @param tsize the link's cumulative DAG size, if the link carries one
 */
public record DirectoryEntry(String name, Cid cid, Optional<Long> tsize) {
  /** Validates. */
  public DirectoryEntry {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(cid, "cid");
    Objects.requireNonNull(tsize, "tsize");
  }
}
