package io.relaypinner.ipfs.datastore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** What every {@link Datastore} must do; each implementation's test extends this. */
abstract class DatastoreContractTest {
  protected Datastore store;

  /** A fresh, empty store. */
  protected abstract Datastore open();

  @BeforeEach
  void openStore() {
    store = open();
  }

  @AfterEach
  void closeStore() {
    store.close();
  }

  protected static byte[] utf8(final String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void put_shouldStoreACopy_readableByGet() {
    final byte[] value = utf8("one");
    store.put("/pins/a", value);
    value[0] = 'X';
    assertThat(store.get("/pins/a")).hasValueSatisfying(v -> assertThat(v).isEqualTo(utf8("one")));
    store.get("/pins/a").orElseThrow()[0] = 'Y';
    assertThat(store.get("/pins/a")).hasValueSatisfying(v -> assertThat(v).isEqualTo(utf8("one")));
    assertThat(store.get("/pins/b")).isEmpty();
  }

  @Test
  void put_shouldReplace_andDeleteShouldRemove() {
    store.put("/k", utf8("1"));
    store.put("/k", utf8("2"));
    assertThat(store.get("/k")).hasValueSatisfying(v -> assertThat(v).isEqualTo(utf8("2")));
    assertThat(store.delete("/k")).isTrue();
    assertThat(store.delete("/k")).isFalse();
    assertThat(store.get("/k")).isEmpty();
  }

  @Test
  void scan_shouldReturnEntriesUnderThePrefix_inKeyOrder() {
    store.put("/relay/topics/b", utf8("tb"));
    store.put("/pins/b", utf8("2"));
    store.put("/pins/a", utf8("1"));
    store.put("/pinsx", utf8("not under /pins/"));
    store.put("/pins/", utf8("the prefix itself"));
    store.put("/relay/topics/a", utf8("ta"));

    final List<Datastore.Entry> pins = store.scan("/pins/");
    assertThat(pins).extracting(Datastore.Entry::key).containsExactly("/pins/", "/pins/a",
        "/pins/b");
    assertThat(pins.get(1).value()).isEqualTo(utf8("1"));
    assertThat(store.scan("/relay/")).extracting(Datastore.Entry::key)
        .containsExactly("/relay/topics/a", "/relay/topics/b");
    assertThat(store.scan("/nothing/")).isEmpty();
    assertThat(store.scan("/")).hasSize(6);
  }

  @Test
  void scanPages_shouldCoverThePrefixOnce_inKeyOrder() {
    store.put("/a", utf8("before"));
    for (int i = 0; i < 25; i++) {
      store.put(String.format("/pins/%02d", i), utf8("v" + i));
    }
    store.put("/pinsx", utf8("not under /pins/"));

    final List<String> keys = new java.util.ArrayList<>();
    String after = null;
    int pages = 0;
    while (true) {
      final List<Datastore.Entry> page = store.scan("/pins/", after, 10);
      pages++;
      page.forEach(e -> keys.add(e.key()));
      if (page.size() < 10) {
        break;
      }
      after = page.get(page.size() - 1).key();
    }
    assertThat(pages).isEqualTo(3);
    assertThat(keys).hasSize(25).isSorted().doesNotHaveDuplicates()
        .allMatch(k -> k.startsWith("/pins/"));
    assertThat(store.scan("/pins/", "/pins/23", 10)).extracting(Datastore.Entry::key)
        .containsExactly("/pins/24");
    assertThat(store.scan("/pins/", "/pins/24", 10)).isEmpty();
    assertThat(store.scan("/pins/", null, 1).get(0).value()).isEqualTo(utf8("v0"));
    assertThat(store.scan("/nothing/", null, 10)).isEmpty();
  }

  @Test
  void put_shouldRejectBadKeysAndOversizedValues() {
    assertThatThrownBy(() -> store.put("pins/a", utf8("x")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'/'");
    assertThatThrownBy(() -> store.put("", utf8("x"))).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> store.put("/a\nb", utf8("x")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("control");
    assertThatThrownBy(() -> store.put("/" + "k".repeat(Datastore.MAX_KEY_LENGTH), utf8("x")))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> store.put("/big", new byte[Datastore.MAX_VALUE_SIZE + 1]))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("exceeds");
    assertThat(store.scan("/")).isEmpty();
  }

  @Test
  void put_shouldKeepEveryWrite_whenCalledConcurrently() throws Exception {
    final ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      final List<Future<?>> writes = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        final int thread = t;
        writes.add(pool.submit(() -> {
          for (int i = 0; i < 25; i++) {
            store.put("/c/" + thread + "/" + i, utf8(thread + ":" + i));
          }
          return null;
        }));
      }
      for (final Future<?> write : writes) {
        write.get(60, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(store.scan("/c/")).hasSize(100);
  }
}
