package io.relaypinner.libp2p.protocol.kad;

import io.relaypinner.multiformats.Multihash;
import io.relaypinner.multiformats.PeerId;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;

/**
 * The Kademlia routing table (libp2p/specs kad-dht/README.md, "Kademlia routing table"): one
 * k-bucket per common-prefix length with our own point, each holding at most k peers, least
 * recently seen first. Only peers that answer {@code /ipfs/kad/1.0.0} (DHT servers) may be
 * offered; the caller decides that (identify listed the protocol, or the peer answered a
 * request).
 *
 * <p>Replacement (Kademlia's, as js-libp2p does it): a full bucket does not take a new peer
 * outright. The new peer waits as the bucket's one candidate while the caller checks the bucket's
 * least recently seen peer ({@link Offer#toCheck}); {@link #livenessChecked} then keeps the old
 * peer (alive: long-lived peers are the most reliable) or replaces it with the candidate. A
 * second newcomer while a check runs is dropped, so a flood of new PeerIds costs one check per
 * bucket at a time and never displaces a live peer.
 *
 * <p>Refresh bookkeeping: every lookup is recorded for the bucket of its target
 * ({@link #lookedUp}); {@link #refreshDue} names the buckets not looked up within the refresh
 * interval, and {@link #randomKeyForBucket} makes a key to look up for one of them.
 *
 * <p>Time from an injected {@link Clock}. Thread-safe.
 */
public final class RoutingTable {
  /** What {@link #offer} did. */
  public enum Outcome { ADDED, UPDATED, PENDING, DROPPED, SELF }

  /** The result of an offer; {@code toCheck} is set for {@link Outcome#PENDING}. */
  public record Offer(Outcome outcome, PeerId toCheck) {}

  /** A peer of the table. */
  public record Entry(PeerId peer, KadKey key, Instant addedAt, Instant lastSeen) {}

  private final PeerId self;
  private final KadKey selfKey;
  private final int k;
  private final Clock clock;
  /** Index = common-prefix length; insertion order = least recently seen first. */
  private final List<LinkedHashMap<PeerId, Entry>> buckets = new ArrayList<>();
  /** The one candidate of a full bucket whose oldest peer is being checked, by cpl. */
  private final Map<Integer, PeerId> candidates = new HashMap<>();
  private final Instant[] lastLookup = new Instant[KadKey.BITS + 1];
  private long added;
  private long evicted;
  private long dropped;

  public RoutingTable(final PeerId self, final int k, final Clock clock) {
    this.self = Objects.requireNonNull(self, "self");
    this.selfKey = KadKey.of(self);
    this.k = k;
    this.clock = Objects.requireNonNull(clock, "clock");
    for (int i = 0; i <= KadKey.BITS; i++) {
      buckets.add(new LinkedHashMap<>());
    }
    final Instant now = clock.instant();
    java.util.Arrays.fill(lastLookup, now);
  }

  public PeerId self() {
    return self;
  }

  /** Offers a peer seen speaking the protocol now. */
  public synchronized Offer offer(final PeerId peer) {
    if (peer.equals(self)) {
      return new Offer(Outcome.SELF, null);
    }
    final KadKey key = KadKey.of(peer);
    final int cpl = selfKey.commonPrefixLength(key);
    final LinkedHashMap<PeerId, Entry> bucket = buckets.get(cpl);
    final Instant now = clock.instant();
    final Entry old = bucket.remove(peer);
    if (old != null) {
      bucket.put(peer, new Entry(peer, key, old.addedAt(), now));
      return new Offer(Outcome.UPDATED, null);
    }
    if (bucket.size() < k) {
      bucket.put(peer, new Entry(peer, key, now, now));
      added++;
      return new Offer(Outcome.ADDED, null);
    }
    if (candidates.containsKey(cpl)) {
      dropped++;
      return new Offer(Outcome.DROPPED, null);
    }
    candidates.put(cpl, peer);
    return new Offer(Outcome.PENDING, bucket.keySet().iterator().next());
  }

  /**
   * The outcome of checking {@code checked} (the {@link Offer#toCheck} of a pending offer):
   * alive keeps it (as just seen) and drops the candidate; dead replaces it with the candidate.
   */
  public synchronized void livenessChecked(final PeerId checked, final boolean alive) {
    final int cpl = selfKey.commonPrefixLength(KadKey.of(checked));
    final PeerId candidate = candidates.remove(cpl);
    final LinkedHashMap<PeerId, Entry> bucket = buckets.get(cpl);
    final Entry old = bucket.remove(checked);
    final Instant now = clock.instant();
    if (alive && old != null) {
      bucket.put(checked, new Entry(checked, old.key(), old.addedAt(), now));
      if (candidate != null) {
        dropped++;
      }
      return;
    }
    if (old != null) {
      evicted++;
    }
    if (candidate != null && bucket.size() < k && !bucket.containsKey(candidate)) {
      bucket.put(candidate, new Entry(candidate, KadKey.of(candidate), now, now));
      added++;
    }
  }

  /** Forgets a peer (it stopped speaking the protocol, or kept failing requests). */
  public synchronized boolean remove(final PeerId peer) {
    final int cpl = selfKey.commonPrefixLength(KadKey.of(peer));
    final boolean removed = buckets.get(cpl).remove(peer) != null;
    if (removed) {
      evicted++;
    }
    return removed;
  }

  public synchronized boolean contains(final PeerId peer) {
    return buckets.get(selfKey.commonPrefixLength(KadKey.of(peer))).containsKey(peer);
  }

  public synchronized int size() {
    int size = 0;
    for (final Map<PeerId, Entry> bucket : buckets) {
      size += bucket.size();
    }
    return size;
  }

  /** The peers of bucket {@code cpl}, least recently seen first. */
  public synchronized List<Entry> bucket(final int cpl) {
    return List.copyOf(buckets.get(cpl).values());
  }

  /** The {@code count} peers closest to {@code target}, closest first. */
  public synchronized List<PeerId> closest(final KadKey target, final int count) {
    final List<Entry> all = new ArrayList<>();
    for (final Map<PeerId, Entry> bucket : buckets) {
      all.addAll(bucket.values());
    }
    final Comparator<KadKey> byDistance = target.byDistance();
    all.sort((a, b) -> byDistance.compare(a.key(), b.key()));
    final List<PeerId> out = new ArrayList<>(Math.min(count, all.size()));
    for (final Iterator<Entry> it = all.iterator(); it.hasNext() && out.size() < count; ) {
      out.add(it.next().peer());
    }
    return out;
  }

  /** Records a lookup of {@code target}: its bucket needs no refresh for a while. */
  public synchronized void lookedUp(final KadKey target) {
    lastLookup[Math.min(selfKey.commonPrefixLength(target), KadKey.BITS)] = clock.instant();
  }

  /**
   * The buckets (common-prefix lengths, shallowest first) up to {@code maxCpl} and no deeper than
   * one past the deepest non-empty bucket that were not looked up in within {@code interval}.
   */
  public synchronized List<Integer> refreshDue(final Duration interval, final int maxCpl) {
    int deepest = 0;
    for (int cpl = KadKey.BITS; cpl >= 0; cpl--) {
      if (!buckets.get(cpl).isEmpty()) {
        deepest = cpl;
        break;
      }
    }
    final Instant due = clock.instant().minus(interval);
    final List<Integer> out = new ArrayList<>();
    for (int cpl = 0; cpl <= Math.min(maxCpl, deepest + 1); cpl++) {
      if (!lastLookup[cpl].isAfter(due)) {
        out.add(cpl);
      }
    }
    return out;
  }

  /**
   * A FIND_NODE key (the bytes of a random sha2-256 peer id) whose point shares exactly
   * {@code cpl} leading bits with ours, found by trying random ids: about 2^(cpl+1) SHA-256s, so
   * {@code cpl} is capped at 20 (go-libp2p-kad-dht ships a precomputed table for the same
   * purpose and refreshes up to cpl 15).
   */
  public byte[] randomKeyForBucket(final int cpl, final Random random) {
    if (cpl < 0 || cpl > 20) {
      throw new IllegalArgumentException("refresh cpl must be in 0..20: " + cpl);
    }
    final byte[] digest = new byte[32];
    while (true) {
      random.nextBytes(digest);
      final byte[] key = Multihash.of(0x12, digest).bytes();
      if (selfKey.commonPrefixLength(KadKey.of(key)) == cpl) {
        return key;
      }
    }
  }

  /** Peers added, evicted (replaced or removed) and dropped (offered to a full bucket). */
  public synchronized Map<String, Long> counters() {
    return Map.of("added", added, "evicted", evicted, "dropped", dropped);
  }
}
