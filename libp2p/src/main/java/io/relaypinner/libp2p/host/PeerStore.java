package io.relaypinner.libp2p.host;

import io.relaypinner.libp2p.crypto.PublicKey;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.PeerId;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What the host knows about peers: addresses, protocols and agent from identify, the public key.
 *
 * <p>Bounded in two parts. Peers with an open connection ({@link #connected}, until the last one
 * closes: {@link #disconnected}) are always kept: their records are part of what a connection
 * costs, bounded by the connection limits and identify's message size. Peers without one (they
 * left, or were only dialled) are kept least recently used first within {@code capacity} peers
 * and {@code recentMaxBytes} of estimated heap ({@link PeerInfo#estimatedBytes}), so a stream of
 * short-lived peers (each writer of a local-first app is a new one) or of peers with big
 * identify answers cannot grow it beyond that share of the heap.
 */
public final class PeerStore {
  /** One peer's record; immutable, replaced on update. */
  public record PeerInfo(PeerId peerId, Optional<PublicKey> publicKey, List<Multiaddr> addresses,
      List<String> protocols, Optional<String> agentVersion) {
    public PeerInfo {
      addresses = List.copyOf(addresses);
      protocols = List.copyOf(protocols);
    }

    static PeerInfo empty(final PeerId peerId) {
      return new PeerInfo(peerId, Optional.empty(), List.of(), List.of(), Optional.empty());
    }

    /**
     * The heap this record takes, estimated from the object layout: the record, its PeerId and
     * key, its lists, and per address (object, components and encoding) and per string.
     */
    public long estimatedBytes() {
      long bytes = 400;
      for (final Multiaddr address : addresses) {
        bytes += 120 + 3L * address.bytes().length;
      }
      for (final String protocol : protocols) {
        bytes += 64 + protocol.length();
      }
      return bytes + agentVersion.map(agent -> 64L + agent.length()).orElse(0L);
    }
  }

  /** Per-peer lists are capped too: a peer cannot make us keep thousands of its addresses. */
  static final int MAX_ADDRESSES = 64;
  static final int MAX_PROTOCOLS = 256;

  /**
   * The estimated heap the records of peers without a connection may take on a heap of
   * {@code maxHeap} bytes: a 64th of it (2.5 MiB on the launcher's 160 MiB, about 1,000 typical
   * peers), at least 1 MiB.
   */
  public static long recentBytesFor(final long maxHeap) {
    return Math.max(1 << 20, maxHeap / 64);
  }

  private final int capacity;
  private final long recentMaxBytes;
  /** Records of peers with an open connection. */
  private final Map<PeerId, PeerInfo> live = new HashMap<>();
  /** Open connections per peer in {@link #live}. */
  private final Map<PeerId, Integer> connections = new HashMap<>();
  /** Records of peers without one, least recently used first. */
  private final LinkedHashMap<PeerId, PeerInfo> recent = new LinkedHashMap<>(64, 0.75f, true);
  private long recentBytes;

  /** A store keeping up to {@code capacity} peers without a connection, within 1/64 of the heap. */
  public PeerStore(final int capacity) {
    this(capacity, recentBytesFor(Runtime.getRuntime().maxMemory()));
  }

  public PeerStore(final int capacity, final long recentMaxBytes) {
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity must be >= 1: " + capacity);
    }
    if (recentMaxBytes < 1) {
      throw new IllegalArgumentException("recentMaxBytes must be >= 1: " + recentMaxBytes);
    }
    this.capacity = capacity;
    this.recentMaxBytes = recentMaxBytes;
  }

  public synchronized Optional<PeerInfo> get(final PeerId peerId) {
    final PeerInfo info = live.get(peerId);
    return Optional.ofNullable(info != null ? info : recent.get(peerId));
  }

  /** Peers known, with a connection or without. */
  public synchronized int size() {
    return live.size() + recent.size();
  }

  /** The estimated heap of the records of peers without a connection. */
  public synchronized long recentBytes() {
    return recentBytes;
  }

  /** A connection to {@code peerId} opened: its record is kept until its last one closes. */
  public synchronized void connected(final PeerId peerId) {
    if (connections.merge(peerId, 1, Integer::sum) == 1) {
      final PeerInfo info = recent.remove(peerId);
      if (info != null) {
        recentBytes -= info.estimatedBytes();
        live.put(peerId, info);
      }
    }
  }

  /** A connection to {@code peerId} closed: after its last one, its record may be forgotten. */
  public synchronized void disconnected(final PeerId peerId) {
    final Integer left = connections.computeIfPresent(peerId, (p, n) -> n <= 1 ? null : n - 1);
    if (left == null) {
      final PeerInfo info = live.remove(peerId);
      if (info != null) {
        putRecent(info);
      }
    }
  }

  /** Records identify's answer; absent parts ({@code null}) keep what was known. */
  public synchronized PeerInfo update(final PeerId peerId, final PublicKey publicKey,
      final List<Multiaddr> addresses, final List<String> protocols, final String agentVersion) {
    final PeerInfo old = get(peerId).orElseGet(() -> PeerInfo.empty(peerId));
    final PeerInfo updated = new PeerInfo(peerId,
        publicKey != null ? Optional.of(publicKey) : old.publicKey(),
        addresses != null ? cap(addresses, MAX_ADDRESSES) : old.addresses(),
        protocols != null ? cap(protocols, MAX_PROTOCOLS) : old.protocols(),
        agentVersion != null ? Optional.of(agentVersion) : old.agentVersion());
    put(updated);
    return updated;
  }

  /** Adds one address (e.g. the one we dialled) if it is not known yet. */
  public synchronized void addAddress(final PeerId peerId, final Multiaddr address) {
    final PeerInfo old = get(peerId).orElseGet(() -> PeerInfo.empty(peerId));
    if (old.addresses().contains(address) || old.addresses().size() >= MAX_ADDRESSES) {
      put(old);
      return;
    }
    final List<Multiaddr> addresses = new ArrayList<>(old.addresses());
    addresses.add(address);
    put(new PeerInfo(peerId, old.publicKey(), addresses, old.protocols(), old.agentVersion()));
  }

  private void put(final PeerInfo info) {
    if (connections.containsKey(info.peerId())) {
      live.put(info.peerId(), info);
    } else {
      putRecent(info);
    }
  }

  private void putRecent(final PeerInfo info) {
    final PeerInfo before = recent.put(info.peerId(), info);
    if (before != null) {
      recentBytes -= before.estimatedBytes();
    }
    recentBytes += info.estimatedBytes();
    final var eldest = recent.values().iterator();
    while ((recent.size() > capacity || recentBytes > recentMaxBytes) && eldest.hasNext()) {
      final PeerInfo gone = eldest.next();
      eldest.remove();
      recentBytes -= gone.estimatedBytes();
    }
  }

  private static <T> List<T> cap(final List<T> list, final int max) {
    return list.size() <= max ? list : list.subList(0, max);
  }
}
