package io.relaypinner.libp2p.protocol.kad;

import io.relaypinner.common.budget.Resource;
import io.relaypinner.common.budget.Scope;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.PeerId;
import java.nio.ByteBuffer;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * Provider records received by ADD_PROVIDER (libp2p/specs kad-dht/README.md, "Content provider
 * advertisement"): which peers provide a key, with the addresses they gave. The key is the
 * multihash of the content (as the DHT keys it), never the CID, so a CIDv0 and a CIDv1 of the
 * same bytes share their providers. A record expires {@link KadConfig#providerTtl} (48 h, as go
 * and js use) after it was last added; the provider re-provides before then.
 *
 * <p>Bounded three ways, each refusal counted: records in all, records per key, and keys per
 * providing peer (so one peer cannot fill the store); and each record's estimated bytes are
 * reserved in a memory {@link Scope} of the node budget, so the store gives way when the node
 * is short of memory. A full key refuses newcomers and keeps the providers it has (replacing
 * them would let a flood of fresh PeerIds push honest providers out).
 *
 * <p>Time from an injected {@link Clock}. Thread-safe.
 */
public final class ProviderStore {
  /** What {@link #add} did. */
  public enum Result {
    ADDED, REFRESHED, REFUSED_TOTAL, REFUSED_PER_KEY, REFUSED_PER_PROVIDER, REFUSED_MEMORY;

    public boolean stored() {
      return this == ADDED || this == REFRESHED;
    }

    public String label() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /** Estimated heap of one record beyond its addresses: map entries, record, peer id. */
  static final long RECORD_OVERHEAD = 200;
  /** Estimated heap of one key beyond its bytes: map entry, buffer, inner map. */
  static final long KEY_OVERHEAD = 160;

  private record Record(KadPeer provider, Instant expiresAt, long bytes) {}

  private final KadConfig config;
  private final Clock clock;
  private final Scope memory;
  /** Insertion order per key = oldest addition first. */
  private final Map<ByteBuffer, LinkedHashMap<PeerId, Record>> byKey = new HashMap<>();
  private final Map<PeerId, Integer> perProvider = new HashMap<>();
  private final Map<Result, Long> counts = new TreeMap<>();
  private int records;

  /**
   * @param memory where the records' bytes are reserved ({@link Resource#MEMORY}); a scope of
   *     the node budget, or a root of its own
   */
  public ProviderStore(final KadConfig config, final Clock clock, final Scope memory) {
    this.config = Objects.requireNonNull(config, "config");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.memory = Objects.requireNonNull(memory, "memory");
    for (final Result result : Result.values()) {
      counts.put(result, 0L);
    }
  }

  /**
   * Adds or refreshes {@code provider} for {@code key} (a multihash's bytes). Its addresses are
   * kept up to {@link KadConfig#maxProviderAddresses}.
   */
  public synchronized Result add(final byte[] key, final KadPeer provider) {
    final ByteBuffer k = ByteBuffer.wrap(key.clone());
    final List<Multiaddr> addresses = provider.addresses().size()
        <= config.maxProviderAddresses() ? provider.addresses()
        : provider.addresses().subList(0, config.maxProviderAddresses());
    final KadPeer kept = new KadPeer(provider.id(), addresses);
    final long bytes = RECORD_OVERHEAD + addresses.stream().mapToLong(a -> a.bytes().length + 48)
        .sum();
    final Instant expiresAt = clock.instant().plus(config.providerTtl());
    final LinkedHashMap<PeerId, Record> providers = byKey.get(k);
    final Record old = providers == null ? null : providers.get(provider.id());
    if (old != null && !old.expiresAt().isBefore(clock.instant())) {
      if (bytes > old.bytes() && !memory.tryReserve(Resource.MEMORY, bytes - old.bytes())) {
        return count(Result.REFUSED_MEMORY);
      }
      if (bytes < old.bytes()) {
        memory.release(Resource.MEMORY, old.bytes() - bytes);
      }
      providers.remove(provider.id());
      providers.put(provider.id(), new Record(kept, expiresAt, bytes));
      return count(Result.REFRESHED);
    }
    if (old != null) {
      remove(k, providers, provider.id());
    }
    final LinkedHashMap<PeerId, Record> current = byKey.get(k);
    if (records >= config.maxProviderRecords()) {
      return count(Result.REFUSED_TOTAL);
    }
    if (current != null && current.size() >= config.maxProvidersPerKey()) {
      return count(Result.REFUSED_PER_KEY);
    }
    if (perProvider.getOrDefault(provider.id(), 0) >= config.maxKeysPerProvider()) {
      return count(Result.REFUSED_PER_PROVIDER);
    }
    final long keyBytes = current == null ? KEY_OVERHEAD + key.length : 0;
    if (!memory.tryReserve(Resource.MEMORY, bytes + keyBytes)) {
      return count(Result.REFUSED_MEMORY);
    }
    byKey.computeIfAbsent(k, x -> new LinkedHashMap<>())
        .put(provider.id(), new Record(kept, expiresAt, bytes));
    perProvider.merge(provider.id(), 1, Integer::sum);
    records++;
    return count(Result.ADDED);
  }

  private Result count(final Result result) {
    counts.merge(result, 1L, Long::sum);
    return result;
  }

  private void remove(final ByteBuffer key, final LinkedHashMap<PeerId, Record> providers,
      final PeerId provider) {
    final Record record = providers.remove(provider);
    if (record == null) {
      return;
    }
    long freed = record.bytes();
    if (providers.isEmpty()) {
      byKey.remove(key);
      freed += KEY_OVERHEAD + key.capacity();
    }
    memory.release(Resource.MEMORY, freed);
    perProvider.computeIfPresent(provider, (p, n) -> n <= 1 ? null : n - 1);
    records--;
  }

  /** The unexpired providers of {@code key}, most recently added first, at most {@code max}. */
  public synchronized List<KadPeer> providers(final byte[] key, final int max) {
    final LinkedHashMap<PeerId, Record> providers = byKey.get(ByteBuffer.wrap(key));
    if (providers == null) {
      return List.of();
    }
    final Instant now = clock.instant();
    final List<Record> live = new ArrayList<>();
    for (final Record record : providers.values()) {
      if (!record.expiresAt().isBefore(now)) {
        live.add(record);
      }
    }
    live.sort(Comparator.comparing(Record::expiresAt).reversed());
    return live.stream().limit(max).map(Record::provider).toList();
  }

  /** Drops every expired record; returns how many. Call periodically (go: hourly). */
  public synchronized int expire() {
    final Instant now = clock.instant();
    int removed = 0;
    for (final Iterator<Map.Entry<ByteBuffer, LinkedHashMap<PeerId, Record>>> keys =
        byKey.entrySet().iterator(); keys.hasNext(); ) {
      final Map.Entry<ByteBuffer, LinkedHashMap<PeerId, Record>> entry = keys.next();
      long freed = 0;
      for (final Iterator<Record> it = entry.getValue().values().iterator(); it.hasNext(); ) {
        final Record record = it.next();
        if (record.expiresAt().isBefore(now)) {
          it.remove();
          freed += record.bytes();
          perProvider.computeIfPresent(record.provider().id(), (p, n) -> n <= 1 ? null : n - 1);
          records--;
          removed++;
        }
      }
      if (entry.getValue().isEmpty()) {
        keys.remove();
        freed += KEY_OVERHEAD + entry.getKey().capacity();
      }
      memory.release(Resource.MEMORY, freed);
    }
    return removed;
  }

  /** Records held now (expired ones until {@link #expire}). */
  public synchronized int size() {
    return records;
  }

  /** Keys held now. */
  public synchronized int keys() {
    return byKey.size();
  }

  /** How often each {@link Result} happened, by label. */
  public synchronized Map<String, Long> counters() {
    final Map<String, Long> out = new TreeMap<>();
    counts.forEach((r, n) -> out.put(r.label(), n));
    return out;
  }
}
