package io.relaypinner.ipfs.datastore;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Test fixture run as a child JVM by {@link MvStoreDatastoreProcessTest}: from {@code n = start}
 * on, writes one durable batch per {@code n} ({@link #onceKey} once, {@link #hotKey} overwritten)
 * and runs {@link MvStoreDatastore#maintain} every {@link #MAINTAIN_EVERY} batches, printing
 * {@code ack <n> <maintenance runs>} after each batch returned, until killed. Dead chunks are
 * reused at once (retention 0), the harshest setting for a crash.
 */
public final class DatastoreMaintenanceCrashWriter {
  /** Hot keys, overwritten in turn. */
  static final int HOT = 40;
  static final int MAINTAIN_EVERY = 4;

  private DatastoreMaintenanceCrashWriter() {}

  /** Args: the datastore file, the first n. */
  public static void main(final String[] args) {
    final MvStoreDatastore store = new MvStoreDatastore(Path.of(args[0]), 0);
    for (long n = Long.parseLong(args[1]); ; n++) {
      final Map<String, byte[]> puts = new LinkedHashMap<>();
      puts.put(onceKey(n), value(n, 200));
      for (int i = 0; i < 4; i++) {
        final long h = n * 4 + i;
        puts.put(hotKey(h), value(h, 4_000));
      }
      store.write(puts, List.of());
      if (n % MAINTAIN_EVERY == 0) {
        store.maintain();
      }
      System.out.println("ack " + n + " " + store.maintenanceRuns());
      System.out.flush();
    }
  }

  static String onceKey(final long n) {
    return String.format("/once/%010d", n);
  }

  /** The hot key that write number {@code h} (n * 4 + i) overwrites. */
  static String hotKey(final long h) {
    return String.format("/hot/%03d", h % HOT);
  }

  /** {@code length} bytes starting with the decimal {@code n} and a space. */
  static byte[] value(final long n, final int length) {
    final byte[] head = (n + " ").getBytes(StandardCharsets.US_ASCII);
    final byte[] value = new byte[length];
    System.arraycopy(head, 0, value, 0, head.length);
    for (int i = head.length; i < length; i++) {
      value[i] = (byte) (n * 31 + i);
    }
    return value;
  }

  /** The n a {@link #value} starts with. */
  static long number(final byte[] value) {
    int end = 0;
    while (value[end] != ' ') {
      end++;
    }
    return Long.parseLong(new String(value, 0, end, StandardCharsets.US_ASCII));
  }
}
