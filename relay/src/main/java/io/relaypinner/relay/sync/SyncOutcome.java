package io.relaypinner.relay.sync;

import java.util.Objects;

/**
 * How an explicit sync request ({@link SyncEngine#requestSync}) ended for its caller, spec 4.5.
 * {@code coalesced} is true when the caller waited on a sync of the same address that was already
 * queued or running.
 */
public sealed interface SyncOutcome {
  boolean coalesced();

  /** The sync finished: 200 with the result. */
  record Completed(SyncResult result, boolean coalesced) implements SyncOutcome {
    public Completed {
      Objects.requireNonNull(result, "result");
    }
  }

  /**
   * The sync failed: 500 {@code sync_failed}, or 503 {@code store_unavailable} when a shared
   * store was down ({@code unavailableStore}: its name, else null; the sync is retried).
   */
  record Failed(String message, boolean coalesced, String unavailableStore)
      implements SyncOutcome {
    public Failed {
      Objects.requireNonNull(message, "message");
    }

    public Failed(final String message, final boolean coalesced) {
      this(message, coalesced, null);
    }
  }

  /**
   * The sync did not finish within {@code RELAY_PINNING_SYNC_TIMEOUT_MS} and is still queued or
   * running: 504 {@code sync_timeout}; a retry coalesces onto it.
   */
  record TimedOut(long timeoutMillis, boolean coalesced) implements SyncOutcome {}
}
