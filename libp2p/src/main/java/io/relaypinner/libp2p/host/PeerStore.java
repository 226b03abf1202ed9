package io.relaypinner.libp2p.host;

import io.relaypinner.libp2p.crypto.PublicKey;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.PeerId;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What the host knows about peers: addresses, protocols and agent from identify, the public key.
 * Bounded: the least recently touched peer is forgotten when {@code capacity} is exceeded, so a
 * flood of short-lived peers cannot grow it without limit.
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
  }

  /** Per-peer lists are capped too: a peer cannot make us keep thousands of its addresses. */
  static final int MAX_ADDRESSES = 64;
  static final int MAX_PROTOCOLS = 256;

  private final int capacity;
  private final LinkedHashMap<PeerId, PeerInfo> peers;

  public PeerStore(final int capacity) {
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity must be >= 1: " + capacity);
    }
    this.capacity = capacity;
    this.peers = new LinkedHashMap<>(64, 0.75f, true) {
      private static final long serialVersionUID = 1L;

      @Override
      protected boolean removeEldestEntry(final Map.Entry<PeerId, PeerInfo> eldest) {
        return size() > PeerStore.this.capacity;
      }
    };
  }

  public synchronized Optional<PeerInfo> get(final PeerId peerId) {
    return Optional.ofNullable(peers.get(peerId));
  }

  public synchronized int size() {
    return peers.size();
  }

  /** Records identify's answer; absent parts ({@code null}) keep what was known. */
  public synchronized PeerInfo update(final PeerId peerId, final PublicKey publicKey,
      final List<Multiaddr> addresses, final List<String> protocols, final String agentVersion) {
    final PeerInfo old = peers.getOrDefault(peerId, PeerInfo.empty(peerId));
    final PeerInfo updated = new PeerInfo(peerId,
        publicKey != null ? Optional.of(publicKey) : old.publicKey(),
        addresses != null ? cap(addresses, MAX_ADDRESSES) : old.addresses(),
        protocols != null ? cap(protocols, MAX_PROTOCOLS) : old.protocols(),
        agentVersion != null ? Optional.of(agentVersion) : old.agentVersion());
    peers.put(peerId, updated);
    return updated;
  }

  /** Adds one address (e.g. the one we dialled) if it is not known yet. */
  public synchronized void addAddress(final PeerId peerId, final Multiaddr address) {
    final PeerInfo old = peers.getOrDefault(peerId, PeerInfo.empty(peerId));
    if (old.addresses().contains(address) || old.addresses().size() >= MAX_ADDRESSES) {
      peers.put(peerId, old);
      return;
    }
    final List<Multiaddr> addresses = new ArrayList<>(old.addresses());
    addresses.add(address);
    peers.put(peerId, new PeerInfo(peerId, old.publicKey(), addresses, old.protocols(),
        old.agentVersion()));
  }

  private static <T> List<T> cap(final List<T> list, final int max) {
    return list.size() <= max ? list : list.subList(0, max);
  }
}
