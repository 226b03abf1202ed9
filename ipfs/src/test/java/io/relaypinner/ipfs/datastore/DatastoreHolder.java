package io.relaypinner.ipfs.datastore;

import java.io.IOException;
import java.nio.file.Path;

/**
 * Test fixture run as a child JVM by {@link MvStoreDatastoreProcessTest}: opens an {@link
 * MvStoreDatastore}, prints {@code open}, and holds it until its stdin closes.
 */
public final class DatastoreHolder {
  private DatastoreHolder() {}

  /** Args: the datastore file. */
  public static void main(final String[] args) throws IOException {
    try (MvStoreDatastore store = new MvStoreDatastore(Path.of(args[0]))) {
      store.put("/held", new byte[] {1});
      System.out.println("open");
      System.out.flush();
      while (System.in.read() >= 0) {
        // Wait for the parent to close our stdin.
      }
    }
  }
}
