package io.relaypinner.ipfs.datastore;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * Test fixture run as a child JVM by {@link MvStoreDatastoreProcessTest}: puts {@code /k/<n>}
 * forever, printing {@code put <n>} after each put returned, until killed.
 */
public final class DatastoreCrashWriter {
  private DatastoreCrashWriter() {}

  /** Args: the datastore file. */
  public static void main(final String[] args) {
    final MvStoreDatastore store = new MvStoreDatastore(Path.of(args[0]));
    for (long n = 1; ; n++) {
      store.put(key(n), Long.toString(n).getBytes(StandardCharsets.US_ASCII));
      System.out.println("put " + n);
      System.out.flush();
    }
  }

  static String key(final long n) {
    return String.format("/k/%010d", n);
  }
}
