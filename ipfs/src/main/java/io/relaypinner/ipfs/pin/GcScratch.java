package io.relaypinner.ipfs.pin;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import org.h2.mvstore.MVMap;
import org.h2.mvstore.MVStore;

/**
 * Where garbage collection keeps the sets that grow with the store (the blocks a run saw, the
 * blocks its mark reached, the frontier of its walk, the sightings of unpinned blocks between
 * runs): H2 MVStore maps, in a scratch file of their own when a directory is given, so the heap
 * they take is bounded by {@link #CACHE_MIB}, {@link #COMMIT_BUFFER_KIB} and
 * {@link #HEAP_FRONTIER} whatever the store holds ({@link #onDisk}); in memory otherwise ({@link #inHeap}: tests and memory stores, whose
 * blocks are in the heap anyway).
 *
 * <p>Nothing in a scratch file is durable or trusted: every run marks again from the durable
 * pins, a {@link Space} deletes its file when closed, and a file a crash left behind is deleted
 * when a space of the same name opens again. A crash therefore loses only what a space says of
 * unpinned blocks (their sightings start over: more garbage kept, nothing live deleted).
 */
public final class GcScratch {
  /** The MVStore page cache of one on-disk space, in MiB: most of the heap a space takes. */
  public static final int CACHE_MIB = 2;
  /** Unsaved changes an on-disk space holds before it writes them, in KiB. */
  public static final int COMMIT_BUFFER_KIB = 512;

  /** CIDs of GC's walk frontier kept in the heap by default; more go to the space. */
  public static final int HEAP_FRONTIER = 4_096;

  private static final AtomicLong SEQUENCE = new AtomicLong();

  private final Path dir;
  private final int heapFrontier;

  private GcScratch(final Path dir, final int heapFrontier) {
    if (heapFrontier < 1) {
      throw new IllegalArgumentException("heapFrontier must be positive: " + heapFrontier);
    }
    this.dir = dir;
    this.heapFrontier = heapFrontier;
  }

  /** Scratch in memory: unbounded, for stores whose blocks are in the heap anyway. */
  public static GcScratch inHeap() {
    return new GcScratch(null, HEAP_FRONTIER);
  }

  /** Scratch files in {@code dir} (created when absent): bounded heap, whatever the store. */
  public static GcScratch onDisk(final Path dir) {
    return onDisk(dir, HEAP_FRONTIER);
  }

  /**
   * As {@link #onDisk(Path)}, keeping at most {@code heapFrontier} CIDs of a mark's frontier in
   * the heap (tests lower it to make a small store spill).
   */
  public static GcScratch onDisk(final Path dir, final int heapFrontier) {
    return new GcScratch(Objects.requireNonNull(dir, "dir"), heapFrontier);
  }

  /** CIDs of a mark's frontier kept in the heap; the rest go to the space. */
  public int heapFrontier() {
    return heapFrontier;
  }

  /** Whether spaces are files (bounded heap). */
  public boolean bounded() {
    return dir != null;
  }

  /**
   * A new, empty space called {@code name} (a file {@code <name>.scratch} on disk: one left by a
   * crash is deleted first). Close it when done.
   */
  public Space open(final String name) {
    if (dir == null) {
      return new Space(new MVStore.Builder().open(), null);
    }
    final Path file = dir.resolve(name + ".scratch");
    try {
      Files.createDirectories(dir);
      Files.deleteIfExists(file);
    } catch (final IOException e) {
      throw new UncheckedIOException("cannot prepare GC scratch file " + file, e);
    }
    final MVStore store = new MVStore.Builder().fileName(file.toString()).cacheSize(CACHE_MIB)
        .autoCommitBufferSize(COMMIT_BUFFER_KIB).open();
    return new Space(store, file);
  }

  /** A space of maps; not thread-safe beyond what MVStore maps are. */
  public static final class Space implements AutoCloseable {
    private final MVStore store;
    private final Path file;

    private Space(final MVStore store, final Path file) {
      this.store = store;
      this.file = file;
    }

    /**
     * The map {@code name} of this space (empty when new). Keys are {@code byte[]} (compared by
     * content), {@code Long} or {@code String}; iteration is in key order and streams from the
     * file.
     */
    public <K, V> MVMap<K, V> map(final String name) {
      return store.openMap(name);
    }

    /** A new, empty map, unique in this space (the name of an earlier one is never reused). */
    public <K, V> MVMap<K, V> newMap(final String prefix) {
      return store.openMap(prefix + "-" + SEQUENCE.incrementAndGet());
    }

    /** Removes a map and its entries. */
    public void drop(final Map<?, ?> map) {
      if (map instanceof MVMap<?, ?> mv && !mv.isClosed()) {
        store.removeMap(mv);
      }
    }

    /** Closes the space and deletes its file. */
    @Override
    public void close() {
      store.closeImmediately();
      if (file != null) {
        try {
          Files.deleteIfExists(file);
        } catch (final IOException e) {
          throw new UncheckedIOException("cannot delete GC scratch file " + file, e);
        }
      }
    }
  }
}
