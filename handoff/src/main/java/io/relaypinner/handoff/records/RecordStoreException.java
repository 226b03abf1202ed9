package io.relaypinner.handoff.records;

/**
 * The record store could not be reached or could not answer (connection refused, timeout, a
 * response that is not the API's shape, a storage failure). Not the fault of the record that was
 * being published or read: retrying later may succeed.
 */
public final class RecordStoreException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public RecordStoreException(final String message) {
    super(message);
  }

  public RecordStoreException(final String message, final Throwable cause) {
    super(message, cause);
  }
}
