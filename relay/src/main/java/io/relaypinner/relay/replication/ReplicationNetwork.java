package io.relaypinner.relay.replication;

import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.PeerId;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.orbitdb.heads.HeadsEndpoint;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * What replication needs from the network, and nothing more: who is on a database's topic, the
 * heads exchange in both directions, re-dialling a peer, and announcing stored blocks. The node
 * implements it on libp2p ({@link Libp2pReplicationNetwork}); unit tests on a fake, so the
 * replication core runs without sockets. Calls must not block.
 */
public interface ReplicationNetwork {
  /** Peers subscribed to {@code topic} now. */
  Set<PeerId> topicPeers(String topic);

  /** Whether a connection to {@code peer} is open. */
  boolean isConnected(PeerId peer);

  /**
   * Runs one heads exchange with {@code peer} on its open connection: sends our heads (from
   * {@code endpoint}) and hands theirs to it. Fails when not connected or the peer does not have
   * the database open.
   */
  CompletableFuture<?> exchangeHeads(PeerId peer, OrbitDbAddress address, HeadsEndpoint endpoint);

  /** Dials {@code peer} at an address it was seen at; completes true once connected. */
  CompletableFuture<Boolean> redial(PeerId peer);

  /** Whether any peer is connected to fetch blocks from (a peer known to speak bitswap). */
  boolean hasPeers();

  /**
   * Whether any peer is connected that may have a block we lack, before a fetch from the network
   * is given up at once: a bitswap peer, or any other connected peer whose identify has not told
   * yet which protocols it speaks (a writer that connected a moment ago, or whose identify failed
   * under load). Those are identified (again) now: our wants reach each of them as soon as its
   * identify lists bitswap, within the fetch's own timeout.
   */
  default boolean reachPeers() {
    return hasPeers();
  }

  /**
   * Publishes {@code data} on {@code topic} (gossipsub) to the peers subscribed to it; nothing
   * when none is. Failures are counted by the pubsub, never thrown.
   */
  void publish(String topic, byte[] data);

  /** {@code cid} is stored here now: tell the peers that want it. */
  void announce(Cid cid);

  /** Starts answering inbound heads exchanges of the databases {@code endpoints} knows. */
  void serveHeads(Function<OrbitDbAddress, Optional<HeadsEndpoint>> endpoints);

  /** Counters of the heads protocol ({@code streams-inbound}, {@code closed-<reason>}, ...). */
  Map<String, Long> headsCounters();
}
