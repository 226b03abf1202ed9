package io.relaypinner.orbitdb;

import io.relaypinner.libp2p.host.Connection;
import io.relaypinner.libp2p.host.ProtocolRegistry;
import io.relaypinner.multiformats.PeerId;
import io.relaypinner.orbitdb.heads.HeadsConfig;
import io.relaypinner.orbitdb.heads.HeadsEndpoint;
import io.relaypinner.orbitdb.heads.HeadsExchangeProtocol;
import io.relaypinner.orbitdb.heads.HeadsExchangeResult;
import io.relaypinner.orbitdb.log.JoinResult;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ForkJoinPool;

/**
 * For tests: {@link OrbitDbReplicas} with the heads exchange answered and dialled straight from
 * the replicas (each head joined at once) and pubsub messages joined directly: the simplest
 * OrbitDB peer. The relay routes both through its replication service instead.
 */
public final class ReplicasNode {
  private final OrbitDbReplicas replicas;
  private final HeadsExchangeProtocol headsProtocol;

  public ReplicasNode(final ReplicaContext context, final HeadsConfig headsConfig) {
    this.replicas = new OrbitDbReplicas(context);
    this.headsProtocol = new HeadsExchangeProtocol(headsConfig,
        address -> replicas.replica(address).map(ReplicasNode::endpoint));
  }

  public OrbitDbReplicas replicas() {
    return replicas;
  }

  public HeadsExchangeProtocol headsProtocol() {
    return headsProtocol;
  }

  public void register(final ProtocolRegistry registry) {
    headsProtocol.register(registry);
  }

  public CompletableFuture<OrbitDbReplica> follow(final OrbitDbAddress address) {
    return replicas.follow(address);
  }

  public Optional<OrbitDbReplica> replica(final OrbitDbAddress address) {
    return replicas.replica(address);
  }

  /** Joins a pubsub message on a followed database's topic; empty for other topics. */
  public Optional<CompletableFuture<JoinResult>> onPubsubMessage(final String topic,
      final byte[] data) {
    if (!OrbitDbAddress.isValid(topic)) {
      return Optional.empty();
    }
    return replica(OrbitDbAddress.parse(topic)).map(replica -> replica.joinBlock(data));
  }

  /** Runs the heads exchange for a followed database as dialer on {@code connection}. */
  public CompletableFuture<HeadsExchangeResult> exchangeHeads(final Connection connection,
      final OrbitDbAddress address) {
    return replica(address).map(replica -> headsProtocol.exchange(connection, address,
        endpoint(replica))).orElseGet(() -> CompletableFuture.failedFuture(
            new IllegalStateException("not following " + address)));
  }

  /** A replica's side of the heads exchange: our heads from its log, theirs joined at once. */
  static HeadsEndpoint endpoint(final OrbitDbReplica replica) {
    return new HeadsEndpoint() {
      @Override
      public CompletableFuture<List<byte[]>> heads() {
        return CompletableFuture.supplyAsync(() -> replica.log().headBlocks(),
            ForkJoinPool.commonPool());
      }

      @Override
      public void onHead(final byte[] block, final PeerId from) {
        replica.joinBlock(block);
      }
    };
  }
}
