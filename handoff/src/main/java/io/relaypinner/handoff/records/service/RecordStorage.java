package io.relaypinner.handoff.records.service;

import java.util.List;
import java.util.Optional;

/**
 * The narrow storage under {@link LocalRecordStore}: three string-keyed tables of bytes with
 * sorted prefix scans, and one atomic, durable batch write. Implementations:
 * {@link MemoryRecordStorage} (tests) and {@link MvStoreRecordStorage} (the service's file).
 */
public interface RecordStorage extends AutoCloseable {
  /** The tables. */
  enum Table {
    /** item hash to the message envelope JSON. */
    MESSAGES,
    /** {@code TYPE \0 owner \0 item hash} to nothing: find messages by type and owner. */
    INDEX,
    /** item hash to the tombstone JSON of a forgotten message. */
    TOMBSTONES
  }

  /** One change of a batch: a put when {@code value} is not null, else a removal. */
  record Write(Table table, String key, byte[] value) {
    public static Write put(final Table table, final String key, final byte[] value) {
      return new Write(table, key, value);
    }

    public static Write remove(final Table table, final String key) {
      return new Write(table, key, null);
    }
  }

  /** The value of {@code key}, if present. */
  Optional<byte[]> get(Table table, String key);

  /** Keys starting with {@code prefix}, in ascending order. */
  List<String> keys(Table table, String prefix);

  /** How many keys {@code table} holds. */
  long size(Table table);

  /**
   * Applies every write or none and returns only once they are durable (a crash afterwards keeps
   * them).
   *
   * @throws io.relaypinner.handoff.records.RecordStoreException when the writes fail
   */
  void apply(List<Write> writes);

  @Override
  void close();
}
