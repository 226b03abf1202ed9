package io.relaypinner.relay.replication;

import io.relaypinner.ipfs.bitswap.Bitswap;
import io.relaypinner.ipfs.bitswap.BitswapProtocol;
import io.relaypinner.libp2p.host.Connection;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.pubsub.PubSub;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.PeerId;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.orbitdb.heads.HeadsConfig;
import io.relaypinner.orbitdb.heads.HeadsEndpoint;
import io.relaypinner.orbitdb.heads.HeadsExchangeProtocol;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/** {@link ReplicationNetwork} on the node's libp2p host, gossipsub and bitswap. */
public final class Libp2pReplicationNetwork implements ReplicationNetwork {
  private final Host host;
  private final PubSub pubsub;
  private final Bitswap bitswap;
  private final HeadsConfig headsConfig;
  private volatile HeadsExchangeProtocol heads;

  public Libp2pReplicationNetwork(final Host host, final PubSub pubsub, final Bitswap bitswap,
      final HeadsConfig headsConfig) {
    this.host = Objects.requireNonNull(host, "host");
    this.pubsub = Objects.requireNonNull(pubsub, "pubsub");
    this.bitswap = Objects.requireNonNull(bitswap, "bitswap");
    this.headsConfig = Objects.requireNonNull(headsConfig, "headsConfig");
  }

  @Override
  public Set<PeerId> topicPeers(final String topic) {
    return Set.copyOf(pubsub.peers(topic));
  }

  @Override
  public boolean isConnected(final PeerId peer) {
    return host.connection(peer).isPresent();
  }

  @Override
  public CompletableFuture<?> exchangeHeads(final PeerId peer, final OrbitDbAddress address,
      final HeadsEndpoint endpoint) {
    final HeadsExchangeProtocol protocol = heads;
    if (protocol == null) {
      return CompletableFuture.failedFuture(new IllegalStateException("heads not served yet"));
    }
    return host.connection(peer)
        .<CompletableFuture<?>>map(c -> protocol.exchange(c, address, endpoint))
        .orElseGet(() -> CompletableFuture.failedFuture(
            new IllegalStateException("not connected to " + peer)));
  }

  @Override
  public CompletableFuture<Boolean> redial(final PeerId peer) {
    return host.peerStore().get(peer)
        .flatMap(info -> info.addresses().stream().findFirst())
        .map((Multiaddr addr) -> host.dial(addr.withoutPeerId().withPeerId(peer))
            .handle((connection, error) -> error == null))
        .orElseGet(() -> CompletableFuture.completedFuture(false));
  }

  @Override
  public boolean hasPeers() {
    return bitswap.peerCount() > 0;
  }

  @Override
  public boolean reachPeers() {
    boolean any = bitswap.peerCount() > 0;
    for (final Connection connection : host.connections()) {
      final List<String> protocols = host.peerStore().get(connection.remotePeer())
          .map(info -> info.protocols()).orElse(List.of());
      if (protocols.isEmpty()) {
        // Not identified yet (or its identify failed): identify it, sharing an identify still
        // running; its answer tells bitswap that the peer speaks it.
        host.identify(connection);
        any = true;
      } else if (protocols.stream().anyMatch(BitswapProtocol.PROTOCOL_IDS::contains)) {
        // Identified, and bitswap is about to hear of it.
        any = true;
      }
    }
    return any;
  }

  @Override
  public void publish(final String topic, final byte[] data) {
    if (pubsub.peers(topic).isEmpty()) {
      return;
    }
    // A failure (too large for a message, the peers left meanwhile) is counted by the pubsub;
    // those peers exchange heads on their next subscription instead.
    pubsub.publish(topic, data);
  }

  @Override
  public void announce(final Cid cid) {
    bitswap.blockAdded(cid);
  }

  @Override
  public synchronized void serveHeads(
      final Function<OrbitDbAddress, Optional<HeadsEndpoint>> endpoints) {
    if (heads != null) {
      throw new IllegalStateException("heads served already");
    }
    final HeadsExchangeProtocol protocol = new HeadsExchangeProtocol(headsConfig, endpoints);
    protocol.register(host.protocols());
    heads = protocol;
  }

  @Override
  public Map<String, Long> headsCounters() {
    final HeadsExchangeProtocol protocol = heads;
    return protocol == null ? Map.of() : protocol.counters();
  }
}
