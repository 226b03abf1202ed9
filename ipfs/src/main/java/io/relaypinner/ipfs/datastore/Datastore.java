package io.relaypinner.ipfs.datastore;

import java.util.List;
import java.util.Optional;

/**
 * A small durable key-to-bytes store for node state: pins, followed OrbitDB heads and manifests,
 * sync state. Keys are path-like strings, {@code /pins/<cid>} or {@code /relay/topics/<topic>}:
 * they start with {@code /}, are at most {@value #MAX_KEY_LENGTH} characters and contain no
 * control characters. Values are at most {@value #MAX_VALUE_SIZE} bytes; big data belongs in the
 * blockstore.
 *
 * <p>A {@link #put} or {@link #delete} that returned is durable: it survives a process crash and
 * a power loss (implementations that are not persistent, like {@link MemoryDatastore}, say so).
 * Implementations are thread-safe and may block on disk I/O.
 */
public interface Datastore extends AutoCloseable {
  /** Longest key accepted. */
  int MAX_KEY_LENGTH = 1024;
  /** Largest value accepted. */
  int MAX_VALUE_SIZE = 1024 * 1024;

  /** One key and its value, as {@link #scan} returns them. */
  record Entry(String key, byte[] value) {}

  /** The value under {@code key}, if any (a copy the caller may keep). */
  Optional<byte[]> get(String key);

  /** Stores {@code value} under {@code key}, replacing any previous value; durable on return. */
  void put(String key, byte[] value);

  /** Removes {@code key}; false when it was absent. Durable on return. */
  boolean delete(String key);

  /**
   * Stores every value of {@code puts} and removes every key of {@code deletes}, durable on
   * return. Implementations may make it one write (one commit, one fsync) rather than one per
   * key; this default does one per key, in order (puts, then deletes).
   */
  default void write(final java.util.Map<String, byte[]> puts,
      final java.util.Collection<String> deletes) {
    for (final java.util.Map.Entry<String, byte[]> e : puts.entrySet()) {
      put(e.getKey(), e.getValue());
    }
    for (final String key : deletes) {
      delete(key);
    }
  }

  /**
   * As {@link #write}, fenced: a store shared by several nodes writes nothing and throws
   * {@link StaleFenceException} unless {@code fence}'s lease is still held at its epoch when the
   * write commits (so a write is ordered strictly before or after a takeover of the lease).
   * Stores of one node alone have nobody to be fenced from: this default ignores the fence.
   */
  default void write(final java.util.Map<String, byte[]> puts,
      final java.util.Collection<String> deletes, final Fence fence) {
    java.util.Objects.requireNonNull(fence, "fence");
    write(puts, deletes);
  }

  /**
   * As {@link #write}, but durable only by the next durable write or {@link #flush} of this
   * store, whoever makes it: visible at once, and a crash before then loses it (with everything
   * written later), never anything written durably before it. For records that can be rebuilt
   * (a replicated entry's pin, which a later scan of its log writes again), so that a burst of
   * them rides on the next commit instead of costing one fsync each. Anything the records
   * reference must be durable before the call (e.g. after {@code Blockstore.sync}). This
   * default is {@link #write} (durable on return).
   */
  default void writeDeferred(final java.util.Map<String, byte[]> puts,
      final java.util.Collection<String> deletes) {
    write(puts, deletes);
  }

  /**
   * Makes every {@link #writeDeferred} before the call durable (one commit); does nothing when
   * there is none, and in stores whose writes are all durable on return (this default).
   */
  default void flush() {
  }

  /**
   * Every entry whose key starts with {@code prefix}, in ascending key order (UTF-16 code unit
   * order, as {@link String#compareTo}). A consistent snapshot as of the call.
   */
  List<Entry> scan(String prefix);

  /**
   * One page of {@link #scan}: at most {@code limit} entries whose key starts with {@code prefix}
   * and comes after {@code after} (null: from the first), in ascending key order; the next page
   * starts after the last key of this one. Memory for the page only, so a long prefix (a log's
   * markers) is read in bounded pieces. This default filters a whole {@link #scan}; the stores
   * override it.
   */
  default List<Entry> scan(final String prefix, final String after, final int limit) {
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be positive");
    }
    final List<Entry> out = new java.util.ArrayList<>();
    for (final Entry e : scan(prefix)) {
      if (after == null || e.key().compareTo(after) > 0) {
        out.add(e);
        if (out.size() == limit) {
          break;
        }
      }
    }
    return out;
  }

  /** Releases the store; later calls fail. */
  @Override
  void close();

  /**
   * Checks a key against the rules above.
   *
   * @throws IllegalArgumentException when it breaks one
   */
  static String checkKey(final String key) {
    if (key == null || key.isEmpty() || key.charAt(0) != '/') {
      throw new IllegalArgumentException("datastore key must start with '/': " + key);
    }
    if (key.length() > MAX_KEY_LENGTH) {
      throw new IllegalArgumentException(
          "datastore key of " + key.length() + " characters exceeds " + MAX_KEY_LENGTH);
    }
    for (int i = 0; i < key.length(); i++) {
      if (Character.isISOControl(key.charAt(i))) {
        throw new IllegalArgumentException("datastore key contains a control character at " + i);
      }
    }
    return key;
  }

  /**
   * Checks a value's size.
   *
   * @throws IllegalArgumentException when it is too large
   */
  static byte[] checkValue(final byte[] value) {
    if (value.length > MAX_VALUE_SIZE) {
      throw new IllegalArgumentException(
          "datastore value of " + value.length + " bytes exceeds " + MAX_VALUE_SIZE);
    }
    return value;
  }
}
