package io.relaypinner.ipfs.datastore;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link MvStoreDatastore#maintain}: a long-running store's churn (keys written once and never
 * again, hot keys overwritten, entries deleted) leaves pages that never change in ever more
 * chunks; maintenance keeps the file and the chunk count bounded, without it both grow.
 */
class MvStoreMaintenanceTest {
  /** Commits of the churn (30 MB); each a batch (one commit, one fsync) of about 100 KiB. */
  private static final int COMMITS = 300;
  /** Hot keys, each overwritten with 2,000 bytes every 6 commits. */
  private static final int HOT = 300;
  /** The relay runs maintenance every 10 s; here every this many commits. */
  private static final int MAINTAIN_EVERY = 10;

  @TempDir
  Path dir;

  @Test
  void rewriteBudget_shouldGrowAsChunksGetSparser() {
    final int small = MvStoreDatastore.MAINTENANCE_REWRITE_BYTES;
    final int max = MvStoreDatastore.MAINTENANCE_REWRITE_BYTES_MAX;
    assertThat(MvStoreDatastore.rewriteBudget(79)).isEqualTo(small);
    assertThat(MvStoreDatastore.rewriteBudget(50)).isEqualTo(small);
    assertThat(MvStoreDatastore.rewriteBudget(49)).isEqualTo(4 * small);
    assertThat(MvStoreDatastore.rewriteBudget(25)).isEqualTo(4 * small);
    assertThat(MvStoreDatastore.rewriteBudget(24)).isEqualTo(max);
    assertThat(MvStoreDatastore.rewriteBudget(0)).isEqualTo(max);
  }

  @Test
  void readers_shouldSeeConsistentSnapshots_whileChurnAndMaintenanceReuseChunksAtOnce()
      throws Exception {
    // Retention 0: a dead chunk may be reused by the next commit, so only the versions readers
    // register keep the pages of their snapshot readable.
    try (MvStoreDatastore store = new MvStoreDatastore(dir.resolve("readers.mv"), 0)) {
      for (int i = 0; i < 2_000; i++) {
        store.put(String.format("/k/%05d", i), named(i, 0));
      }
      final java.util.concurrent.atomic.AtomicBoolean done =
          new java.util.concurrent.atomic.AtomicBoolean();
      final java.util.concurrent.atomic.AtomicReference<Throwable> failed =
          new java.util.concurrent.atomic.AtomicReference<>();
      final Thread reader = new Thread(() -> {
        try {
          while (!done.get()) {
            final List<Datastore.Entry> all = store.scan("/k/");
            assertThat(all).hasSize(2_000);
            for (final Datastore.Entry entry : all) {
              assertThat(keyOf(entry.value())).isEqualTo(entry.key());
            }
            String after = null;
            for (List<Datastore.Entry> page = store.scan("/k/", null, 300); !page.isEmpty();
                page = store.scan("/k/", after, 300)) {
              for (final Datastore.Entry entry : page) {
                assertThat(keyOf(entry.value())).isEqualTo(entry.key());
              }
              after = page.get(page.size() - 1).key();
            }
            final int k = (int) (Math.random() * 2_000);
            assertThat(keyOf(store.get(String.format("/k/%05d", k)).orElseThrow()))
                .isEqualTo(String.format("/k/%05d", k));
          }
        } catch (final Throwable t) {
          failed.set(t);
        }
      });
      reader.start();
      for (int round = 1; round <= 30 && failed.get() == null; round++) {
        final Map<String, byte[]> batch = new LinkedHashMap<>();
        for (int j = 0; j < 100; j++) {
          final int k = (round * 37 + j * 19) % 2_000;
          batch.put(String.format("/k/%05d", k), named(k, round));
        }
        store.write(batch, List.of());
        if (round % 5 == 0) {
          store.maintain();
        }
      }
      done.set(true);
      reader.join();
      assertThat(failed.get()).isNull();
    }
  }

  /** A value that names its key, and the round that wrote it, padded to a page's worth. */
  private static byte[] named(final int key, final int round) {
    final String text = String.format("/k/%05d", key) + "|" + round + "|" + "x".repeat(400);
    return text.getBytes(java.nio.charset.StandardCharsets.UTF_8);
  }

  private static String keyOf(final byte[] value) {
    final String text = new String(value, java.nio.charset.StandardCharsets.UTF_8);
    return text.substring(0, text.indexOf('|'));
  }

  @Test
  void churn_shouldKeepFileAndChunksBounded_withMaintenance_andGrowWithout() {
    // Dead chunks reused at once (production keeps them 45 s), so a quick run shows reuse.
    final List<long[]> maintained;
    final List<long[]> plain;
    final long runs;
    final long[] times;
    try (MvStoreDatastore store = new MvStoreDatastore(dir.resolve("maintained.mv"), 0)) {
      times = new long[] {0, 0};
      maintained = churn(store, true, times);
      runs = store.maintenanceRuns();
      assertEverythingThere(store);
    }
    try (MvStoreDatastore store = new MvStoreDatastore(dir.resolve("plain.mv"), 0)) {
      plain = churn(store, false, null);
      assertEverythingThere(store);
    }
    final long[] maintainedHalf = maintained.get(maintained.size() / 2);
    final long[] maintainedEnd = maintained.get(maintained.size() - 1);
    final long[] plainHalf = plain.get(plain.size() / 2);
    final long[] plainEnd = plain.get(plain.size() - 1);
    System.out.printf("maintained: half %d bytes %d chunks, end %d bytes %d chunks, %d runs,"
        + " max %d ms%n", maintainedHalf[0], maintainedHalf[1], maintainedEnd[0],
        maintainedEnd[1], runs, times[1]);
    System.out.printf("plain: half %d bytes %d chunks, end %d bytes %d chunks%n", plainHalf[0],
        plainHalf[1], plainEnd[0], plainEnd[1]);

    assertThat(runs).isPositive();
    // Without maintenance both keep growing with the churn.
    assertThat(plainEnd[1]).isGreaterThan(plainHalf[1] * 3 / 2);
    assertThat(plainEnd[0]).isGreaterThan(plainHalf[0] * 5 / 4);
    // With it they stay bounded: the chunk count does not grow with the churn, the file grows
    // no faster than the live data (which grows: keys written once).
    assertThat(maintainedEnd[1]).isLessThan(plainEnd[1] / 4).isLessThanOrEqualTo(
        Math.max(maintainedHalf[1] * 3 / 2, 50));
    assertThat(maintainedEnd[0]).isLessThan(plainEnd[0] / 2);
  }

  /** Runs the churn; the file size and chunk count after every maintenance period. */
  private static List<long[]> churn(final MvStoreDatastore store, final boolean maintain,
      final long[] times) {
    final List<long[]> samples = new ArrayList<>();
    for (int commit = 0; commit < COMMITS; commit++) {
      final Map<String, byte[]> puts = new LinkedHashMap<>();
      final List<String> deletes = new ArrayList<>();
      for (int i = 0; i < 10; i++) {
        final int n = commit * 10 + i;
        puts.put(onceKey(n), value(n, 100));
      }
      for (int i = 0; i < HOT / 6; i++) {
        final int n = commit * (HOT / 6) + i;
        puts.put(hotKey(n % HOT), value(n, 2_000));
      }
      if (commit >= 10) {
        deletes.add(onceKey((commit - 10) * 10 + 3));
      }
      store.write(puts, deletes);
      if ((commit + 1) % MAINTAIN_EVERY == 0) {
        if (maintain) {
          final MvStoreDatastore.Maintenance run = store.maintain();
          times[0] += run.millis();
          times[1] = Math.max(times[1], run.millis());
        }
        samples.add(store.chunkStats());
      }
    }
    return samples;
  }

  private static void assertEverythingThere(final MvStoreDatastore store) {
    for (int n = 0; n < COMMITS * 10; n++) {
      final boolean deleted = n % 10 == 3 && n / 10 < COMMITS - 10;
      assertThat(store.get(onceKey(n)).isPresent()).as("key %d", n).isEqualTo(!deleted);
    }
    assertThat(store.get(onceKey(7))).hasValueSatisfying(v -> assertThat(v)
        .isEqualTo(value(7, 100)));
    for (int h = 0; h < HOT; h++) {
      final int last = COMMITS * (HOT / 6) - HOT + h;
      assertThat(store.get(hotKey(h))).hasValueSatisfying(v -> assertThat(v)
          .isEqualTo(value(last, 2_000)));
    }
  }

  private static String onceKey(final int n) {
    return String.format("/once/%08d", n);
  }

  private static String hotKey(final int n) {
    return String.format("/hot/%04d", n);
  }

  private static byte[] value(final int n, final int length) {
    final byte[] value = new byte[length];
    for (int i = 0; i < length; i++) {
      value[i] = (byte) (n * 31 + i);
    }
    return value;
  }
}
