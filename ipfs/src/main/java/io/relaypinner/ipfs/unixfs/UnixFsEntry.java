package io.relaypinner.ipfs.unixfs;

import io.relaypinner.multiformats.Cid;
import java.util.Objects;

/**
 * What a CID or path resolves to in UnixFS ({@code ipfs/specs} {@code src/unixfs.md}).
 *
 * @param cid the block
 * @param kind what it is
 * @param size content length in bytes for {@link Kind#RAW} and {@link Kind#FILE} (also the
 *     target length of a symlink); 0 for directories
 */
public record UnixFsEntry(Cid cid, Kind kind, long size) {
  /** The kinds of UnixFS entries. */
  public enum Kind {
    /** A {@code raw} codec block: its bytes are the content. */
    RAW,
    /** A dag-pb UnixFS File (or Raw) node, possibly the root of a chunked DAG. */
    FILE,
    /** A plain dag-pb UnixFS Directory. */
    DIRECTORY,
    /** A HAMT-sharded UnixFS directory. */
    HAMT_DIRECTORY,
    /** A UnixFS Symlink; never followed. */
    SYMLINK,
    /** A UnixFS Metadata node. */
    METADATA;

    /** Whether bytes can be read from it ({@link UnixFsReader#open}). */
    public boolean isFile() {
      return this == RAW || this == FILE;
    }

    /** Whether a path can go through it. */
    public boolean isDirectory() {
      return this == DIRECTORY || this == HAMT_DIRECTORY;
    }
  }

  /** Validates. */
  public UnixFsEntry {
    Objects.requireNonNull(cid, "cid");
    Objects.requireNonNull(kind, "kind");
  }
}
