package io.relaypinner.ipfs.datastore;

/** A datastore that cannot be opened or written: locked, corrupt, or an I/O failure. */
public class DatastoreException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public DatastoreException(final String message, final Throwable cause) {
    super(message, cause);
  }
}
