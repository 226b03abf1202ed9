package io.relaypinner.orbitdb.log;

import io.relaypinner.ipfs.datastore.Datastore;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** A datastore forwarding every call to another, for tests to intercept some. */
class ForwardingDatastore implements Datastore {
  private final Datastore to;

  ForwardingDatastore(final Datastore to) {
    this.to = to;
  }

  @Override
  public Optional<byte[]> get(final String key) {
    return to.get(key);
  }

  @Override
  public void put(final String key, final byte[] value) {
    to.put(key, value);
  }

  @Override
  public boolean delete(final String key) {
    return to.delete(key);
  }

  @Override
  public void write(final Map<String, byte[]> puts, final Collection<String> deletes) {
    to.write(puts, deletes);
  }

  @Override
  public List<Entry> scan(final String prefix) {
    return to.scan(prefix);
  }

  @Override
  public List<Entry> scan(final String prefix, final String after, final int limit) {
    return to.scan(prefix, after, limit);
  }

  @Override
  public void close() {
  }
}
