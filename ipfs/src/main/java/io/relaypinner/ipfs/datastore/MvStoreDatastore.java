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
 * commit deferred changes at its own pace). Without it every write happens in a caller's thread;
 * dead chunks are still reused by later commits and the file is compacted on {@link #close}. A
 * crash rolls the file back to the last committed chunk, which includes every durable write
 * that returned. {@link #fsyncs} counts the fsyncs.
 *
 * <p>MVStore locks the file exclusively: a second open, from this process or another, fails
 * with {@link DatastoreLockedException}. {@link #close} releases the lock.
 */
public final class MvStoreDatastore implements Datastore {
  /** The MVStore map holding the entries. */
  public static final String MAP_NAME = "datastore";

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

  /**
   * Opens or creates the store file, creating its parent directories.
   *
   * @throws DatastoreLockedException when another store has the file open
   * @throws DatastoreException when the file cannot be opened (unreadable, corrupt, not MVStore)
   */
  public MvStoreDatastore(final Path file) {
    this.file = file.toAbsolutePath();
    try {
      Files.createDirectories(this.file.getParent());
    } catch (final IOException e) {
      throw new DatastoreException("cannot create the directory of datastore " + this.file, e);
    }
    try {
      store = new MVStore.Builder().fileName(this.file.toString()).autoCommitDisabled()
          .open();
    } catch (final MVStoreException e) {
      if (e.getErrorCode() == DataUtils.ERROR_FILE_LOCKED) {
        throw new DatastoreLockedException("datastore " + this.file
            + " is already open (locked by this or another process); use another data"
            + " directory or stop the other node", e);
      }
      throw new DatastoreException("cannot open datastore " + this.file + ": " + e.getMessage(),
          e);
    }
    map = store.openMap(MAP_NAME);
  }

  /** The store file. */
  public Path file() {
    return file;
  }

  @Override
  public Optional<byte[]> get(final String key) {
    final byte[] value = map.get(Datastore.checkKey(key));
    return value == null ? Optional.empty() : Optional.of(value.clone());
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
    // A cursor reads one root of the copy-on-write tree: a consistent snapshot.
    final Cursor<String, byte[]> cursor = map.cursor(prefix);
    while (cursor.hasNext()) {
      final String key = cursor.next();
      if (!key.startsWith(prefix)) {
        break;
      }
      out.add(new Entry(key, cursor.getValue().clone()));
    }
    return out;
  }

  @Override
  public List<Entry> scan(final String prefix, final String after, final int limit) {
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be positive");
    }
    final List<Entry> out = new ArrayList<>();
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
