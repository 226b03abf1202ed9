package io.relaypinner.orbitdb;

import java.util.Objects;

/**
 * An entry, or the identity it names, failed verification; {@link #reason()} says how. Thrown by
 * the verifiers and counted by the log, never propagated to the node.
 */
public final class EntryRejectedException extends RuntimeException {
  private static final long serialVersionUID = 1L;
  private final RejectReason reason;

  public EntryRejectedException(final RejectReason reason, final String message) {
    super(message);
    this.reason = Objects.requireNonNull(reason, "reason");
  }

  public EntryRejectedException(final RejectReason reason, final String message,
      final Throwable cause) {
    super(message, cause);
    this.reason = Objects.requireNonNull(reason, "reason");
  }

  public RejectReason reason() {
    return reason;
  }
}
