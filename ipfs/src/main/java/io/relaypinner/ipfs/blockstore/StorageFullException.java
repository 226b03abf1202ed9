package io.relaypinner.ipfs.blockstore;

import io.relaypinner.common.Failures;

/**
 * A write was refused because the node's storage quota ({@code RELAY_STORAGE_MAX_BYTES}) is
 * reached. Nothing was written and nothing stored was touched: the caller may retry once garbage
 * collection or an operator made room. Nobody's fault but the node's size: HTTP answers it with
 * {@code 507 storage_full}, replication defers the blocks it could not take.
 */
public final class StorageFullException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public StorageFullException(final String message) {
    super(message, null, false, false);
  }

  /** The first {@link StorageFullException} in {@code error}'s cause chain, or null. */
  public static StorageFullException find(final Throwable error) {
    return Failures.find(error, StorageFullException.class);
  }
}
