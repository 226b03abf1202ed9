package io.relaypinner.ipfs.blockstore;

/**
 * A block on disk that cannot be what was stored: larger than {@link Blocks#MAX_BLOCK_SIZE}, or
 * (with verify-on-read) not hashing to its key. Puts verify before writing, so this means the
 * disk or someone outside this process changed the file: our side is to blame, not a peer's.
 */
public final class CorruptBlockException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public CorruptBlockException(final String message) {
    super(message);
  }
}
