package io.relaypinner.libp2p.protocol.kad;

import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.PeerId;
import java.util.List;
import java.util.Objects;

/**
 * A peer as a DHT message names it (closer peers, providers): its id and the addresses the sender
 * knows, without {@code /p2p}. The connection type of the wire message is not kept: no
 * implementation acts on it.
 */
public record KadPeer(PeerId id, List<Multiaddr> addresses) {
  public KadPeer {
    Objects.requireNonNull(id, "id");
    addresses = List.copyOf(addresses);
  }

  /** This peer's point in the keyspace. */
  public KadKey key() {
    return KadKey.of(id);
  }
}
