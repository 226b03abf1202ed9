package io.relaypinner.ipfs.datastore;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.h2.mvstore.Cursor;
import org.h2.mvstore.DataUtils;
import org.h2.mvstore.MVMap;
import org.h2.mvstore.MVStore;
import org.h2.mvstore.MVStoreException;

/**
 * A {@link Datastore} in one H2 MVStore file ({@code com.h2database:h2-mvstore} 2.4), map
 * {@value #MAP_NAME}, {@code String} keys and {@code byte[]} values.
 *
 * <p>Commit policy: every {@link #put}, {@link #delete} and {@link #write} (a batch: one commit
 * for all its keys) is committed and then fsynced ({@link MVStore#commit()} writes a new chunk
 * but does not force it to the disk; {@link MVStore#sync()} does) before returning. A pin that
 * was reported as recorded must never be lost. Durable writes that arrive while another one is
 * being fsynced share the next commit (group commit): each caller applies its change, then one
 * of them commits and fsyncs for all that applied theirs, the others return once a commit that
 * includes their change is on the disk. {@link #writeDeferred} applies its change without a
 * commit; the next durable write or {@link #flush} commits it. MVStore's auto-commit is
 * disabled: its background writer would otherwise hand chunk serialization to executor
 * threads, and {@code sync()} could then run before our chunk reached the file (and it would
 * commit deferred changes at its own pace). Without it every write happens in a caller's thread,
 * and so does the housekeeping that background writer would have done: see {@link #maintain}. A
 * crash rolls the file back to the last committed chunk, which includes every durable write
 * that returned. {@link #fsyncs} counts the fsyncs.
 *
 * <p>Maintenance: each commit writes a new chunk; a chunk's space is reused once none of its
 * pages is live any more (after {@link #RETENTION_MILLIS}). Pages that never change (keys
 * written once) keep their chunk alive, so without housekeeping a long-running store keeps ever
 * more sparse chunks: the file grows (a soak of 21 minutes: 265 MB for 23 MB of data, 10 %
 * live) and so does the chunk metadata MVStore keeps in the heap (one object and one layout
 * entry per chunk, ~10,000 more per hour). {@link #maintain} rewrites the live pages of the
 * sparsest, oldest chunks into the next commit's chunk ({@link MVStore#compact}: copy-on-write,
 * the old chunk stays intact until a later, fsynced commit no longer references it, so a crash
 * at any moment reopens either state), after which the old chunks die and their space is
 * reused by later chunks; the file shrinks when its tail frees. Chunks are never moved in place
 * ({@link MVStore#compactFile} is not used: it overwrites file regions and rewrites the header).
 * The owner calls it periodically ({@link #MAINTENANCE_INTERVAL}). Its budget grows as the
 * rewritable chunks get sparser ({@link #rewriteBudget}): a fixed 1 MiB a run every 5 s did not
 * keep pace with a busy relay (in an hour of the soak the file stayed about 8 times its live
 * data, about 11-12 times without maintenance).
 *
 * <p>Heap: a page cache of {@link #CACHE_MIB} MiB (part of the node's memory budget,
 * docs/hardening.md), the chunk metadata (one entry per chunk: it follows the file's size)
 * and the changes not committed yet.
 *
 * <p>MVStore locks the file exclusively: a second open, from this process or another, fails
 * with {@link DatastoreLockedException}. {@link #close} releases the lock.
 */
public final class MvStoreDatastore implements Datastore {
  /** The MVStore map holding the entries. */
  public static final String MAP_NAME = "datastore";
  /**
   * MVStore's page cache, in MiB of heap (H2's default is 16): the datastore's share of the
   * node's heap (docs/hardening.md); reads beyond it come from the file (the OS page cache).
   */
  public static final int CACHE_MIB = 8;
  /**
   * How long after it was written a chunk is neither reused (once its pages all died) nor
   * rewritten by {@link #maintain}. Readers do not depend on it: {@link #get} and the scans
   * register the version they read ({@link MVStore#registerVersionUsage}), and no chunk that
   * version needs is reused until they end. H2's default for files, 45 s, kept every chunk of
   * the last 45 s: at a busy relay's ~18 commits a second (plus maintenance's rewrites) that
   * was ~800 chunks and most of the file (the soak: 900 chunks, 13 % live, 129 MB for 14.5 MB
   * of data); a few seconds keep a margin.
   */
  public static final int RETENTION_MILLIS = 5_000;
  /**
   * {@link #maintain} rewrites only while less than this share of the bytes of the chunks it may
   * rewrite (older than {@link #RETENTION_MILLIS}, not full) is live.
   */
  public static final int MAINTENANCE_FILL_PERCENT = 80;
  /**
   * Live bytes one {@link #maintain} call rewrites at most while the rewritable chunks are at
   * least half live (the work it holds the lock for); sparser chunks get more, see
   * {@link #rewriteBudget}.
   */
  public static final int MAINTENANCE_REWRITE_BYTES = 1 << 20;
  /** The most live bytes one {@link #maintain} call rewrites (chunks less than a quarter live). */
  public static final int MAINTENANCE_REWRITE_BYTES_MAX = 8 << 20;
  /**
   * How often the owner should call {@link #maintain}. Rewriting {@code L} live bytes out of
   * chunks that are a share {@code f} live frees {@code L / f} bytes of chunks, so the budget
   * keeps pace with new chunks once {@code L / f} exceeds what commits write meanwhile: the soak
   * (about 18 fsynced commits a second, chunks 15 % live) held its file with 4 MiB every 2 s and
   * shrank it with 8 MiB every second, on a copy of its file.
   */
  public static final java.time.Duration MAINTENANCE_INTERVAL = java.time.Duration.ofSeconds(2);

  private final Path file;
  private final MVStore store;
  private final MVMap<String, byte[]> map;
  /** Guards the map's changes and commits. */
  private final Object writeLock = new Object();
  /** Held by the caller fsyncing for everyone (group commit). */
  private final Object syncLock = new Object();
  /** Changes applied so far (guarded by {@link #writeLock}). */
  private long applied;
  /** Changes of {@link #applied} committed and fsynced (guarded by {@link #syncLock}). */
  private volatile long durable;
  /** Deferred changes applied and not committed yet (guarded by {@link #writeLock}). */
  private long deferredPending;
  private final java.util.concurrent.atomic.AtomicLong fsyncs =
      new java.util.concurrent.atomic.AtomicLong();
  private final java.util.concurrent.atomic.AtomicLong commits =
      new java.util.concurrent.atomic.AtomicLong();
  private final java.util.concurrent.atomic.AtomicLong maintenanceRuns =
      new java.util.concurrent.atomic.AtomicLong();

  /**
   * Opens or creates the store file, creating its parent directories.
   *
   * @throws DatastoreLockedException when another store has the file open
   * @throws DatastoreException when the file cannot be opened (unreadable, corrupt, not MVStore)
   */
  public MvStoreDatastore(final Path file) {
    this(file, RETENTION_MILLIS);
  }

  /** As above, with another retention (tests: dead chunks reused sooner). */
  MvStoreDatastore(final Path file, final int retentionMillis) {
    this.file = file.toAbsolutePath();
    try {
      Files.createDirectories(this.file.getParent());
    } catch (final IOException e) {
      throw new DatastoreException("cannot create the directory of datastore " + this.file, e);
    }
    try {
      store = new MVStore.Builder().fileName(this.file.toString()).autoCommitDisabled()
          .cacheSize(CACHE_MIB).open();
    } catch (final MVStoreException e) {
      if (e.getErrorCode() == DataUtils.ERROR_FILE_LOCKED) {
        throw new DatastoreLockedException("datastore " + this.file
            + " is already open (locked by this or another process); use another data"
            + " directory or stop the other node", e);
      }
      throw new DatastoreException("cannot open datastore " + this.file + ": " + e.getMessage(),
          e);
    }
    store.setRetentionTime(retentionMillis);
    map = store.openMap(MAP_NAME);
  }

  /** The store file. */
  public Path file() {
    return file;
  }

  @Override
  public Optional<byte[]> get(final String key) {
    Datastore.checkKey(key);
    final MVStore.TxCounter reading = store.registerVersionUsage();
    try {
      final byte[] value = map.get(key);
      return value == null ? Optional.empty() : Optional.of(value.clone());
    } finally {
      store.deregisterVersionUsage(reading);
    }
  }

  @Override
  public void put(final String key, final byte[] value) {
    Datastore.checkKey(key);
    final byte[] copy = Datastore.checkValue(value).clone();
    final long ticket;
    synchronized (writeLock) {
      map.put(key, copy);
      ticket = ++applied;
    }
    awaitDurable(ticket);
  }

  /** One commit and one fsync for the whole batch (shared with concurrent writes). */
  @Override
  public void write(final java.util.Map<String, byte[]> puts,
      final java.util.Collection<String> deletes) {
    final long ticket = apply(puts, deletes, false);
    if (ticket > 0) {
      awaitDurable(ticket);
    }
  }

  /** Applied at once; committed by the next durable write or {@link #flush}. */
  @Override
  public void writeDeferred(final java.util.Map<String, byte[]> puts,
      final java.util.Collection<String> deletes) {
    apply(puts, deletes, true);
  }

  @Override
  public void flush() {
    final long ticket;
    synchronized (writeLock) {
      if (deferredPending == 0) {
        return;
      }
      ticket = applied;
    }
    awaitDurable(ticket);
  }

  /** Applies a batch to the map; its ticket, 0 when it was empty. */
  private long apply(final java.util.Map<String, byte[]> puts,
      final java.util.Collection<String> deletes, final boolean deferred) {
    final java.util.Map<String, byte[]> copies = new java.util.LinkedHashMap<>();
    for (final java.util.Map.Entry<String, byte[]> e : puts.entrySet()) {
      copies.put(Datastore.checkKey(e.getKey()), Datastore.checkValue(e.getValue()).clone());
    }
    for (final String key : deletes) {
      Datastore.checkKey(key);
    }
    if (copies.isEmpty() && deletes.isEmpty()) {
      return 0;
    }
    synchronized (writeLock) {
      map.putAll(copies);
      for (final String key : deletes) {
        map.remove(key);
      }
      if (deferred) {
        deferredPending++;
      }
      return ++applied;
    }
  }

  @Override
  public boolean delete(final String key) {
    Datastore.checkKey(key);
    final long ticket;
    synchronized (writeLock) {
      if (map.remove(key) == null) {
        return false;
      }
      ticket = ++applied;
    }
    awaitDurable(ticket);
    return true;
  }

  @Override
  public List<Entry> scan(final String prefix) {
    final List<Entry> out = new ArrayList<>();
    // Registered first: no chunk the cursor's snapshot reads is reused before the scan ends.
    final MVStore.TxCounter reading = store.registerVersionUsage();
    try {
      // A cursor reads one root of the copy-on-write tree: a consistent snapshot.
      final Cursor<String, byte[]> cursor = map.cursor(prefix);
      while (cursor.hasNext()) {
        final String key = cursor.next();
        if (!key.startsWith(prefix)) {
          break;
        }
        out.add(new Entry(key, cursor.getValue().clone()));
      }
    } finally {
      store.deregisterVersionUsage(reading);
    }
    return out;
  }

  @Override
  public List<Entry> scan(final String prefix, final String after, final int limit) {
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be positive");
    }
    final List<Entry> out = new ArrayList<>();
    final MVStore.TxCounter reading = store.registerVersionUsage();
    try {
      final Cursor<String, byte[]> cursor = map.cursor(
          after == null || after.compareTo(prefix) < 0 ? prefix : after);
      while (cursor.hasNext() && out.size() < limit) {
        final String key = cursor.next();
        if (after != null && key.equals(after)) {
          continue;
        }
        if (!key.startsWith(prefix)) {
          break;
        }
        out.add(new Entry(key, cursor.getValue().clone()));
      }
    } finally {
      store.deregisterVersionUsage(reading);
    }
    return out;
  }

  @Override
  public void close() {
    synchronized (writeLock) {
      if (!store.isClosed()) {
        store.close();
      }
    }
  }

  /** fsyncs of the store file since open (one per group commit). */
  public long fsyncs() {
    return fsyncs.get();
  }

  /** Durable writes (puts, deletes, batches) since open; more than {@link #fsyncs} when shared. */
  public long durableWrites() {
    return commits.get();
  }

  /**
   * What one {@link #maintain} call did, and the store's file size, chunk count and live share
   * of the chunks' bytes before and after it.
   *
   * @param rewrote whether live pages were rewritten (and committed and fsynced)
   */
  public record Maintenance(boolean rewrote, long fileBytesBefore, long fileBytesAfter,
      int chunksBefore, int chunksAfter, int fillPercentBefore, int fillPercentAfter,
      long millis) {}

  /**
   * Housekeeping, bounded: when less than {@link #MAINTENANCE_FILL_PERCENT} % of the bytes of
   * the chunks it may rewrite is live, rewrites the live pages of the sparsest, oldest chunks
   * (at most {@link #rewriteBudget} live bytes) and commits and fsyncs them, with
   * the group commit's locks in its order (deferred writes applied so far become durable with
   * it). The chunks emptied so are reused by later commits once {@link #RETENTION_MILLIS}
   * passed. Blocks writers for the length of the call (tens of milliseconds for a MiB; the
   * first run on a cold cache reads its pages from the file). Copy-on-write, so a
   * crash during it loses nothing that was durable. Does nothing once closed.
   *
   * @throws DatastoreException when the commit fails
   */
  public Maintenance maintain() {
    final long start = System.nanoTime();
    synchronized (syncLock) {
      final long upTo;
      final long[] before;
      try {
        synchronized (writeLock) {
          if (store.isClosed()) {
            return new Maintenance(false, 0, 0, 0, 0, 0, 0, 0);
          }
          before = chunkStats();
          // The live share of the chunks that can be rewritten (older than the retention, not
          // full), not of all: chunks that died recently count as empty until their retention
          // ends, and rewriting cannot free them sooner (it would run for ever on a busy store).
          if (before[3] >= MAINTENANCE_FILL_PERCENT
              || !store.compact(100, rewriteBudget((int) before[3]))) {
            return new Maintenance(false, before[0], before[0], (int) before[1], (int) before[1],
                (int) before[2], (int) before[2], (System.nanoTime() - start) / 1_000_000);
          }
          upTo = applied;
          store.commit();
          deferredPending = 0;
        }
        // Outside the write lock, as a group commit: writers apply meanwhile.
        store.sync();
      } catch (final MVStoreException e) {
        throw new DatastoreException("cannot compact datastore " + file + ": " + e.getMessage(),
            e);
      }
      fsyncs.incrementAndGet();
      durable = upTo;
      maintenanceRuns.incrementAndGet();
      final long[] after = chunkStats();
      return new Maintenance(true, before[0], after[0], (int) before[1], (int) after[1],
          (int) before[2], (int) after[2], (System.nanoTime() - start) / 1_000_000);
    }
  }

  /**
   * Live bytes a {@link #maintain} run may rewrite when the chunks it may rewrite are
   * {@code fillPercent} % live: {@link #MAINTENANCE_REWRITE_BYTES} from half live up,
   * four times that from a quarter up, {@link #MAINTENANCE_REWRITE_BYTES_MAX} below. The sparser
   * the chunks, the more space a rewritten byte frees and the further behind maintenance is; a
   * store kept near its live data stays on the small budget (short runs, short stalls).
   */
  static int rewriteBudget(final int fillPercent) {
    if (fillPercent >= 50) {
      return MAINTENANCE_REWRITE_BYTES;
    }
    if (fillPercent >= 25) {
      return Math.min(MAINTENANCE_REWRITE_BYTES_MAX, 4 * MAINTENANCE_REWRITE_BYTES);
    }
    return MAINTENANCE_REWRITE_BYTES_MAX;
  }

  /** The file's size in bytes (0 once closed). */
  public long fileBytes() {
    try {
      return store.isClosed() ? 0 : store.getFileStore().size();
    } catch (final MVStoreException e) {
      return 0;
    }
  }

  /** {@link #maintain} calls that rewrote pages, since open. */
  public long maintenanceRuns() {
    return maintenanceRuns.get();
  }

  /**
   * The file's size in bytes, its chunk count, the live share of the chunks' bytes (%) and that
   * of the chunks {@link MVStore#compact} may rewrite (%).
   */
  long[] chunkStats() {
    final long[] stats = new long[4];
    store.getFileStore().populateInfo((name, value) -> {
      switch (name) {
        case "info.FILE_SIZE" -> stats[0] = Long.parseLong(value);
        case "info.CHUNK_COUNT" -> stats[1] = Long.parseLong(value);
        case "info.CHUNKS_FILL_RATE" -> stats[2] = Long.parseLong(value);
        case "info.CHUNKS_FILL_RATE_RW" -> stats[3] = Long.parseLong(value);
        default -> { }
      }
    });
    return stats;
  }

  /**
   * Returns once the change numbered {@code ticket} is committed and fsynced: by a commit that
   * ran meanwhile, or by one this caller runs for every change applied so far.
   */
  private void awaitDurable(final long ticket) {
    commits.incrementAndGet();
    synchronized (syncLock) {
      if (durable >= ticket) {
        return;
      }
      final long upTo;
      try {
        synchronized (writeLock) {
          upTo = applied;
          store.commit();
          deferredPending = 0;
        }
        // Outside the write lock: others apply their changes while this one is fsynced.
        store.sync();
      } catch (final MVStoreException e) {
        throw new DatastoreException("cannot commit datastore " + file + ": " + e.getMessage(),
            e);
      }
      fsyncs.incrementAndGet();
      durable = upTo;
    }
  }
}
