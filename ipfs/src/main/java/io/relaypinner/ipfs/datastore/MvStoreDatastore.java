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
 * for all its keys) commits and then fsyncs the file
 * ({@link MVStore#commit()} writes a new chunk but does not force it to the disk; {@link
 * MVStore#sync()} does) before returning. A pin that was reported as recorded must never be lost,
 * and these writes are rare (pins, heads, sync state), so one chunk write plus one fsync each is
 * cheap enough. MVStore's auto-commit is disabled: its background writer would otherwise hand
 * chunk serialization to executor threads, and {@code sync()} could then run before our chunk
 * reached the file. Without it every write happens in the caller's thread; dead chunks are still
 * reused by later commits and the file is compacted on {@link #close}. A crash rolls the file back
 * to the last committed chunk, which includes every write that returned.
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
  private final Object writeLock = new Object();

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
    synchronized (writeLock) {
      map.put(key, copy);
      durableCommit();
    }
  }

  /** One commit and one fsync for the whole batch. */
  @Override
  public void write(final java.util.Map<String, byte[]> puts,
      final java.util.Collection<String> deletes) {
    final java.util.Map<String, byte[]> copies = new java.util.LinkedHashMap<>();
    for (final java.util.Map.Entry<String, byte[]> e : puts.entrySet()) {
      copies.put(Datastore.checkKey(e.getKey()), Datastore.checkValue(e.getValue()).clone());
    }
    for (final String key : deletes) {
      Datastore.checkKey(key);
    }
    if (copies.isEmpty() && deletes.isEmpty()) {
      return;
    }
    synchronized (writeLock) {
      map.putAll(copies);
      for (final String key : deletes) {
        map.remove(key);
      }
      durableCommit();
    }
  }

  @Override
  public boolean delete(final String key) {
    Datastore.checkKey(key);
    synchronized (writeLock) {
      final boolean removed = map.remove(key) != null;
      if (removed) {
        durableCommit();
      }
      return removed;
    }
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
  public void close() {
    synchronized (writeLock) {
      if (!store.isClosed()) {
        store.close();
      }
    }
  }

  private void durableCommit() {
    try {
      store.commit();
      store.sync();
    } catch (final MVStoreException e) {
      throw new DatastoreException("cannot commit datastore " + file + ": " + e.getMessage(), e);
    }
  }
}
