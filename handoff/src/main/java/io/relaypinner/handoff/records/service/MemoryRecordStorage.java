package io.relaypinner.handoff.records.service;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/** {@link RecordStorage} in memory (tests, throw-away services). Thread-safe. */
public final class MemoryRecordStorage implements RecordStorage {
  private final Map<Table, TreeMap<String, byte[]>> tables = new EnumMap<>(Table.class);

  public MemoryRecordStorage() {
    for (final Table table : Table.values()) {
      tables.put(table, new TreeMap<>());
    }
  }

  @Override
  public synchronized Optional<byte[]> get(final Table table, final String key) {
    final byte[] value = tables.get(table).get(key);
    return value == null ? Optional.empty() : Optional.of(value.clone());
  }

  @Override
  public synchronized List<String> keys(final Table table, final String prefix) {
    final List<String> out = new ArrayList<>();
    for (final String key : tables.get(table).tailMap(prefix, true).keySet()) {
      if (!key.startsWith(prefix)) {
        break;
      }
      out.add(key);
    }
    return out;
  }

  @Override
  public synchronized long size(final Table table) {
    return tables.get(table).size();
  }

  @Override
  public synchronized void apply(final List<Write> writes) {
    for (final Write write : writes) {
      if (write.value() == null) {
        tables.get(write.table()).remove(write.key());
      } else {
        tables.get(write.table()).put(write.key(), write.value().clone());
      }
    }
  }

  @Override
  public void close() {
    // Nothing to release.
  }
}
