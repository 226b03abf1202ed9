package io.relaypinner.libp2p.protocol.kad;

import java.util.List;
import java.util.Objects;

/**
 * One decoded, bounded {@code /ipfs/kad/1.0.0} message (libp2p/specs kad-dht/README.md, "RPC
 * messages"): what {@link KadCodec} read, with at most the configured number of peers and
 * addresses, or what we send. A value record is never kept, only whether there was one.
 *
 * @param key the DHT key: a multihash for GET_PROVIDERS / ADD_PROVIDER, a peer's multihash for
 *     FIND_NODE; empty for PING
 */
public record KadMessage(Type type, byte[] key, List<KadPeer> closerPeers,
    List<KadPeer> providerPeers, boolean hasRecord) {
  /** The message types; {@link #UNKNOWN} for a number no version of the spec defines. */
  public enum Type {
    PUT_VALUE, GET_VALUE, ADD_PROVIDER, GET_PROVIDERS, FIND_NODE, PING, UNKNOWN
  }

  public KadMessage {
    Objects.requireNonNull(type, "type");
    key = key.clone();
    closerPeers = List.copyOf(closerPeers);
    providerPeers = List.copyOf(providerPeers);
  }

  /** A request of {@code type} for {@code key} with no peers. */
  public static KadMessage request(final Type type, final byte[] key) {
    return new KadMessage(type, key, List.of(), List.of(), false);
  }

  @Override
  public byte[] key() {
    return key.clone();
  }
}
