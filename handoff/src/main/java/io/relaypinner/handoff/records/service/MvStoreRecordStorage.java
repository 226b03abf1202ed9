package io.relaypinner.handoff.records.service;

import io.relaypinner.handoff.records.RecordStoreException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.h2.mvstore.Cursor;
import org.h2.mvstore.DataUtils;
import org.h2.mvstore.MVMap;
import org.h2.mvstore.MVStore;
import org.h2.mvstore.MVStoreException;

/**
 * {@link RecordStorage} in one H2 MVStore file (one map per table). Every {@link #apply} commits
 * and then fsyncs ({@link MVStore#commit()} writes a chunk, {@link MVStore#sync()} forces it to the
 * disk) before returning, so an accepted message survives a crash; all writes of one batch land in
 * the same chunk, so a batch is atomic. Auto-commit is off: writes happen only in the caller's
 * thread. MVStore locks the file: a second service on the same data directory fails to open.
 */
public final class MvStoreRecordStorage implements RecordStorage {
  /** The store file inside the data directory. */
  public static final String FILE_NAME = "records.mv.db";

  private final Path file;
  private final MVStore store;
  private final Map<Table, MVMap<String, byte[]>> maps = new EnumMap<>(Table.class);

  /**
   * Opens or creates {@value #FILE_NAME} in {@code dataDir}, creating the directory.
   *
   * @throws RecordStoreException when the file cannot be opened (locked, unreadable, corrupt)
   */
  public MvStoreRecordStorage(final Path dataDir) {
    this.file = dataDir.toAbsolutePath().resolve(FILE_NAME);
    try {
      Files.createDirectories(file.getParent());
    } catch (final IOException e) {
      throw new RecordStoreException("cannot create the data directory " + file.getParent()
          + ": " + e.getMessage(), e);
    }
    try {
      store = new MVStore.Builder().fileName(file.toString()).autoCommitDisabled().open();
    } catch (final MVStoreException e) {
      if (e.getErrorCode() == DataUtils.ERROR_FILE_LOCKED) {
        throw new RecordStoreException("record store " + file
            + " is already open (locked by this or another process)", e);
      }
      throw new RecordStoreException("cannot open record store " + file + ": " + e.getMessage(),
          e);
    }
    for (final Table table : Table.values()) {
      maps.put(table, store.openMap(table.name().toLowerCase(Locale.ROOT)));
    }
  }

  /** The store file. */
  public Path file() {
    return file;
  }

  @Override
  public Optional<byte[]> get(final Table table, final String key) {
    final byte[] value = maps.get(table).get(key);
    return value == null ? Optional.empty() : Optional.of(value.clone());
  }

  @Override
  public List<String> keys(final Table table, final String prefix) {
    final List<String> out = new ArrayList<>();
    final Cursor<String, byte[]> cursor = maps.get(table).cursor(prefix);
    while (cursor.hasNext()) {
      final String key = cursor.next();
      if (!key.startsWith(prefix)) {
        break;
      }
      out.add(key);
    }
    return out;
  }

  @Override
  public long size(final Table table) {
    return maps.get(table).sizeAsLong();
  }

  @Override
  public synchronized void apply(final List<Write> writes) {
    try {
      for (final Write write : writes) {
        if (write.value() == null) {
          maps.get(write.table()).remove(write.key());
        } else {
          maps.get(write.table()).put(write.key(), write.value().clone());
        }
      }
      store.commit();
      store.sync();
    } catch (final MVStoreException e) {
      try {
        // Drop the half-applied batch, so memory matches the last durable chunk.
        store.rollback();
      } catch (final MVStoreException rollback) {
        e.addSuppressed(rollback);
      }
      throw new RecordStoreException("cannot write record store " + file + ": " + e.getMessage(),
          e);
    }
  }

  @Override
  public synchronized void close() {
    if (!store.isClosed()) {
      store.close();
    }
  }
}
