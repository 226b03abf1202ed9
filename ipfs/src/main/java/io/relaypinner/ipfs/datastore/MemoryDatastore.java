package io.relaypinner.ipfs.datastore;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * A {@link Datastore} in memory, for tests and throwaway nodes. Not durable: everything is gone
 * when the process ends. Scans are weakly consistent rather than snapshots.
 */
public final class MemoryDatastore implements Datastore {
  private final ConcurrentSkipListMap<String, byte[]> entries = new ConcurrentSkipListMap<>();

  @Override
  public Optional<byte[]> get(final String key) {
    final byte[] value = entries.get(Datastore.checkKey(key));
    return value == null ? Optional.empty() : Optional.of(value.clone());
  }

  @Override
  public void put(final String key, final byte[] value) {
    entries.put(Datastore.checkKey(key), Datastore.checkValue(value).clone());
  }

  @Override
  public boolean delete(final String key) {
    return entries.remove(Datastore.checkKey(key)) != null;
  }

  @Override
  public List<Entry> scan(final String prefix) {
    final List<Entry> out = new ArrayList<>();
    for (final Map.Entry<String, byte[]> e : entries.tailMap(prefix, true).entrySet()) {
      if (!e.getKey().startsWith(prefix)) {
        break;
      }
      out.add(new Entry(e.getKey(), e.getValue().clone()));
    }
    return out;
  }

  @Override
  public List<Entry> scan(final String prefix, final String after, final int limit) {
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be positive");
    }
    final List<Entry> out = new ArrayList<>();
    final Map<String, byte[]> tail = after == null || after.compareTo(prefix) < 0
        ? entries.tailMap(prefix, true) : entries.tailMap(after, false);
    for (final Map.Entry<String, byte[]> e : tail.entrySet()) {
      if (!e.getKey().startsWith(prefix) || out.size() == limit) {
        break;
      }
      out.add(new Entry(e.getKey(), e.getValue().clone()));
    }
    return out;
  }

  @Override
  public void close() {
    // Nothing to release; the data stays readable until the object is dropped.
  }
}
