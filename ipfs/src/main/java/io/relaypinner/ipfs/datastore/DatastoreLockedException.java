package io.relaypinner.ipfs.datastore;

/**
 * The datastore file is open in another store (MVStore holds an exclusive lock on it). One
 * process per file: start the second node with its own data directory.
 */
public final class DatastoreLockedException extends DatastoreException {
  private static final long serialVersionUID = 1L;

  public DatastoreLockedException(final String message, final Throwable cause) {
    super(message, cause);
  }
}
