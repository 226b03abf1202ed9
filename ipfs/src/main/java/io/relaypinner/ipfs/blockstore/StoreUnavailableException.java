package io.relaypinner.ipfs.blockstore;

import io.relaypinner.common.Failures;

/**
 * A networked store (an S3 block store, a PostgreSQL datastore) could not be reached or answered
 * with a server error after its retries. Nothing was changed by the failed call; the caller may
 * retry later. The relay answers HTTP requests that meet this with 503, and syncs retry.
 */
public class StoreUnavailableException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** The store's name as operators know it ({@code s3}, {@code postgres}). */
  private final String store;

  public StoreUnavailableException(final String store, final String message,
      final Throwable cause) {
    super(store + " unavailable: " + message, cause);
    this.store = store;
  }

  /** Which store failed. */
  public String store() {
    return store;
  }

  /** The first {@link StoreUnavailableException} in {@code error}'s cause chain, or null. */
  public static StoreUnavailableException find(final Throwable error) {
    return Failures.find(error, StoreUnavailableException.class);
  }
}
