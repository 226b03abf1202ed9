package io.relaypinner.relay.replication;

import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.PeerId;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.orbitdb.heads.HeadsEndpoint;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

/**
 * The replication network of unit tests: no peer is connected, so syncs only join what their
 * session's inbox holds. {@link #hasPeers()} says yes, so that nothing is skipped for want of
 * peers. What is published on topics is recorded ({@link #published}), and the heads endpoints
 * the service serves are kept ({@link #endpoints}), so a test can act as a peer's heads exchange.
 */
final class OfflineNetwork implements ReplicationNetwork {
  /** Topic and block of each publication, in order. */
  final List<Map.Entry<String, byte[]>> published = new CopyOnWriteArrayList<>();
  /** What {@link #serveHeads} was given (null before). */
  volatile Function<OrbitDbAddress, Optional<HeadsEndpoint>> endpoints;

  @Override
  public Set<PeerId> topicPeers(final String topic) {
    return Set.of();
  }

  @Override
  public boolean isConnected(final PeerId peer) {
    return false;
  }

  @Override
  public CompletableFuture<?> exchangeHeads(final PeerId peer, final OrbitDbAddress address,
      final HeadsEndpoint endpoint) {
    return CompletableFuture.failedFuture(new IOException("not connected"));
  }

  @Override
  public CompletableFuture<Boolean> redial(final PeerId peer) {
    return CompletableFuture.completedFuture(false);
  }

  @Override
  public boolean hasPeers() {
    return true;
  }

  @Override
  public void publish(final String topic, final byte[] data) {
    published.add(Map.entry(topic, data.clone()));
  }

  @Override
  public void announce(final Cid cid) {}

  @Override
  public void serveHeads(final Function<OrbitDbAddress, Optional<HeadsEndpoint>> endpoints) {
    this.endpoints = endpoints;
  }

  @Override
  public Map<String, Long> headsCounters() {
    return Map.of();
  }
}
