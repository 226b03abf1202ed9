package io.relaypinner.ipfs.unixfs;

import io.relaypinner.multiformats.Cid;
import java.util.Objects;
import java.util.Optional;

/**
 * A UnixFS read or import failure, with a {@link Reason} an HTTP layer maps to a status and the
 * CID of the block concerned when there is one.
 */
public final class UnixFsException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** Why it failed. */
  public enum Reason {
    /** A block of the DAG is not in the blockstore (HTTP 404, or 502 for a fetching gateway). */
    MISSING_BLOCK,
    /** A path segment names no entry (HTTP 404). */
    NOT_FOUND,
    /** Bytes were asked of something that is not a file or raw block (HTTP 400 / listing). */
    NOT_A_FILE,
    /** A path goes through something that is not a directory (HTTP 404). */
    NOT_A_DIRECTORY,
    /** A block is not valid DAG-PB/UnixFS or contradicts its parent (HTTP 400/502). */
    MALFORMED,
    /** Valid but not handled: other codecs, symlinks inside a path, unknown hash types. */
    UNSUPPORTED
  }

  private final Reason reason;
  private final transient Cid cid;

  /** With a reason, the block concerned (may be null) and a message. */
  public UnixFsException(final Reason reason, final Cid cid, final String message) {
    this(reason, cid, message, null);
  }

  /** With a reason, the block concerned (may be null), a message and a cause. */
  public UnixFsException(
      final Reason reason, final Cid cid, final String message, final Throwable cause) {
    super(reason + (cid == null ? "" : " " + cid) + ": " + message, cause);
    this.reason = Objects.requireNonNull(reason, "reason");
    this.cid = cid;
  }

  /** Why it failed. */
  public Reason reason() {
    return reason;
  }

  /** The block concerned, if known. */
  public Optional<Cid> cid() {
    return Optional.ofNullable(cid);
  }
}
