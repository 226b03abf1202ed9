package io.relaypinner.ipfs.blockstore;

/**
 * Block bytes that do not hash to the CID they were offered under (or a CID whose hash cannot be
 * checked). Whoever supplied the block is to blame; nothing is stored.
 */
public final class InvalidBlockException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  public InvalidBlockException(final String message) {
    super(message);
  }
}
