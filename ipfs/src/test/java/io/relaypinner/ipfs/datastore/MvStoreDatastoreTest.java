package io.relaypinner.ipfs.datastore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MvStoreDatastoreTest extends DatastoreContractTest {
  @TempDir
  Path dir;

  @Override
  protected Datastore open() {
    return new MvStoreDatastore(dir.resolve("state").resolve("datastore.mv.db"));
  }

  @Test
  void reopen_shouldFindEverythingWritten() {
    store.put("/pins/a", utf8("1"));
    store.put("/pins/b", utf8("2"));
    store.put("/relay/topics/t", utf8("t"));
    assertThat(store.delete("/pins/b")).isTrue();
    store.close();

    store = open();
    assertThat(store.scan("/")).extracting(Datastore.Entry::key)
        .containsExactly("/pins/a", "/relay/topics/t");
    assertThat(store.get("/pins/a")).hasValueSatisfying(v -> assertThat(v).isEqualTo(utf8("1")));
  }

  @Test
  void write_shouldStoreAndDeleteABatch_durably() {
    store.put("/logs/old", utf8("x"));
    final java.util.Map<String, byte[]> puts = new java.util.LinkedHashMap<>();
    puts.put("/logs/e/1", new byte[0]);
    puts.put("/logs/e/2", new byte[0]);
    puts.put("/logs/heads", utf8("2"));
    store.write(puts, java.util.List.of("/logs/old"));
    store.close();

    store = open();
    assertThat(store.scan("/logs/")).extracting(Datastore.Entry::key)
        .containsExactly("/logs/e/1", "/logs/e/2", "/logs/heads");
  }

  @Test
  void writeDeferred_shouldBeVisibleAtOnce_andCommittedByTheNextDurableWriteOrFlush() {
    final MvStoreDatastore mv = (MvStoreDatastore) store;
    final long before = mv.fsyncs();
    mv.writeDeferred(java.util.Map.of("/pins/a", utf8("1")), java.util.List.of());
    mv.writeDeferred(java.util.Map.of("/pins/b", utf8("2")), java.util.List.of());
    assertThat(mv.get("/pins/a")).isPresent();
    assertThat(mv.fsyncs()).isEqualTo(before);

    mv.put("/logs/heads", utf8("h"));
    assertThat(mv.fsyncs()).isEqualTo(before + 1);
    // Nothing deferred is left: a flush costs nothing.
    mv.flush();
    assertThat(mv.fsyncs()).isEqualTo(before + 1);

    mv.writeDeferred(java.util.Map.of("/pins/c", utf8("3")), java.util.List.of());
    mv.flush();
    assertThat(mv.fsyncs()).isEqualTo(before + 2);
    store.close();
    store = open();
    assertThat(store.scan("/pins/")).extracting(Datastore.Entry::key)
        .containsExactly("/pins/a", "/pins/b", "/pins/c");
  }

  @Test
  void concurrentDurableWrites_shouldAllBeDurable_withAtMostOneFsyncEach() throws Exception {
    final MvStoreDatastore mv = (MvStoreDatastore) store;
    final long before = mv.fsyncs();
    final java.util.concurrent.ExecutorService pool =
        java.util.concurrent.Executors.newFixedThreadPool(4);
    try {
      final java.util.List<java.util.concurrent.Future<?>> done = new java.util.ArrayList<>();
      for (int t = 0; t < 4; t++) {
        final int thread = t;
        done.add(pool.submit(() -> {
          for (int i = 0; i < 50; i++) {
            mv.put("/k/" + thread + "/" + i, utf8("v"));
          }
          return null;
        }));
      }
      for (final java.util.concurrent.Future<?> f : done) {
        f.get(60, java.util.concurrent.TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(mv.durableWrites()).isGreaterThanOrEqualTo(200);
    assertThat(mv.fsyncs() - before).isBetween(1L, 200L);
    store.close();
    store = open();
    assertThat(store.scan("/k/")).hasSize(200);
  }

  @Test
  void open_shouldFailClearly_whenTheFileIsAlreadyOpen() {
    store.put("/k", utf8("v"));
    assertThatThrownBy(this::open)
        .isInstanceOf(DatastoreLockedException.class)
        .hasMessageContaining("already open")
        .hasMessageContaining("datastore.mv.db");
    // The failed open did not disturb the store that holds the file.
    assertThat(store.get("/k")).isPresent();
  }

  @Test
  void open_shouldFailClearly_whenTheFileIsNotAnMvStore() throws IOException {
    final Path junk = Files.writeString(dir.resolve("junk.mv.db"), "not an mvstore file\n");
    assertThatThrownBy(() -> new MvStoreDatastore(junk))
        .isInstanceOf(DatastoreException.class).hasMessageContaining("junk.mv.db");
  }

  @Test
  void close_shouldBeIdempotent_andReleaseTheLock() {
    store.close();
    store.close();
    store = open();
    assertThat(((MvStoreDatastore) store).file().getFileName().toString())
        .isEqualTo("datastore.mv.db");
  }
}
