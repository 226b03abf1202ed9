package io.relaypinner.ipfs.blockstore;

/**
 * A block directory already opened by another store (in this or another process). Two writers
 * would delete each other's temporary files at open, so only one may use a directory.
 */
public final class BlockstoreLockedException extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  public BlockstoreLockedException(final String message) {
    super(message);
  }
}
