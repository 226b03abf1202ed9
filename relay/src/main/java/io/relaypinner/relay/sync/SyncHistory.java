package io.relaypinner.relay.sync;

import io.relaypinner.ipfs.datastore.Datastore;
import io.relaypinner.ipfs.datastore.Fence;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.relay.pubsub.OrbitDbTopics;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The databases synced successfully at least once and when they last were (spec 2.5, 4.4), in
 * memory for the HTTP routes and in the datastore so that a restart keeps them: key
 * {@code /relay/sync/history/<manifest CID>}, value the ISO 8601 UTC time of the last successful
 * sync as UTF-8 text. At most {@code maxEntries} databases are kept; beyond that the one synced
 * longest ago is forgotten. Only database addresses ({@link OrbitDbAddress#parse}) are recorded;
 * a stored entry that is not one (written before the rule was one) is skipped when loaded.
 */
public final class SyncHistory {
  private static final Logger LOG = LoggerFactory.getLogger(SyncHistory.class);
  /** Datastore key prefix; the key is this followed by the manifest CID. */
  public static final String KEY_PREFIX = "/relay/sync/history/";
  /** Default bound, the same as the number of followed topics. */
  public static final int DEFAULT_MAX_ENTRIES = OrbitDbTopics.MAX_TOPICS;

  /**
   * One synced database as {@code GET /pinning/databases} lists it.
   *
   * @param address {@code /orbitdb/<manifest CID>}, canonical ({@link OrbitDbAddress})
   * @param lastSyncedAt end of the last successful sync
   */
  public record Entry(String address, Instant lastSyncedAt) {
    public Entry {
      Objects.requireNonNull(address, "address");
      Objects.requireNonNull(lastSyncedAt, "lastSyncedAt");
    }
  }

  private final Datastore datastore;
  private final int maxEntries;
  private final Function<String, Optional<Fence>> fences;
  private final Map<String, Instant> entries = new ConcurrentHashMap<>();

  /** A history of this relay alone: written unfenced. */
  public SyncHistory(final Datastore datastore, final int maxEntries) {
    this(datastore, maxEntries, address -> Optional.empty());
  }

  /**
   * @param fences the fence of a database's lease while this relay owns it (shared stores): the
   *     owner's record is written fenced, so a former owner that paused past its lease cannot
   *     write its older time after the new owner's; a relay that does not own the database
   *     writes unfenced, as before
   */
  public SyncHistory(final Datastore datastore, final int maxEntries,
      final Function<String, Optional<Fence>> fences) {
    this.datastore = Objects.requireNonNull(datastore, "datastore");
    this.fences = Objects.requireNonNull(fences, "fences");
    if (maxEntries < 1) {
      throw new IllegalArgumentException("maxEntries must be positive: " + maxEntries);
    }
    this.maxEntries = maxEntries;
  }

  /**
   * Reads the stored history (blocks on the datastore). Unreadable entries and entries that are
   * not database addresses are skipped, with one log line.
   */
  public void load() {
    int skipped = 0;
    for (final Datastore.Entry stored : datastore.scan(KEY_PREFIX)) {
      final String address = OrbitDbAddress.PREFIX + stored.key().substring(KEY_PREFIX.length());
      try {
        final Instant at = Instant.parse(new String(stored.value(), StandardCharsets.UTF_8));
        if (OrbitDbAddress.isValid(address)) {
          entries.put(address, at);
          continue;
        }
      } catch (final DateTimeParseException e) {
        // counted below
      }
      skipped++;
    }
    if (skipped > 0) {
      LOG.warn("skipped {} sync history entries under {}: unreadable, or not an OrbitDB address "
          + "/orbitdb/<base58btc dag-cbor CID>", skipped, KEY_PREFIX);
    }
    if (!entries.isEmpty()) {
      LOG.info("sync history: {} databases", entries.size());
    }
  }

  /**
   * Records a successful sync, durably (blocks on the datastore; never call on an event loop),
   * fenced by the database's lease while this relay owns it.
   *
   * @throws IllegalArgumentException when {@code address} is not a database address
   *     ({@link OrbitDbAddress#parse})
   * @throws io.relaypinner.ipfs.datastore.StaleFenceException when this relay lost the lease
   *     meanwhile (nothing recorded)
   */
  public void record(final String address, final Instant at) {
    if (!OrbitDbAddress.isValid(address)) {
      throw new IllegalArgumentException("not a database address: " + address);
    }
    final byte[] value = at.toString().getBytes(StandardCharsets.UTF_8);
    final Optional<Fence> fence = fences.apply(address);
    if (fence.isPresent()) {
      datastore.write(Map.of(key(address), value), List.of(), fence.get());
    } else {
      datastore.put(key(address), value);
    }
    entries.put(address, at);
    while (entries.size() > maxEntries) {
      final Optional<Map.Entry<String, Instant>> oldest = entries.entrySet().stream()
          .min(Map.Entry.comparingByValue());
      if (oldest.isEmpty() || oldest.get().getKey().equals(address)) {
        break;
      }
      entries.remove(oldest.get().getKey());
      datastore.delete(key(oldest.get().getKey()));
    }
  }

  /** The entry of one address, if it was ever synced successfully. */
  public Optional<Entry> get(final String address) {
    final Instant at = entries.get(address);
    return at == null ? Optional.empty() : Optional.of(new Entry(address, at));
  }

  /** Every entry, most recently synced first (ties by address). */
  public List<Entry> all() {
    final List<Entry> all = new ArrayList<>(entries.size());
    entries.forEach((address, at) -> all.add(new Entry(address, at)));
    all.sort(Comparator.comparing(Entry::lastSyncedAt).reversed()
        .thenComparing(Entry::address));
    return all;
  }

  public int size() {
    return entries.size();
  }

  private static String key(final String address) {
    return KEY_PREFIX + address.substring(OrbitDbAddress.PREFIX.length());
  }
}
