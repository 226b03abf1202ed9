package io.relaypinner.orbitdb.heads;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.socket.DuplexChannel;
import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.ipfs.datastore.MemoryDatastore;
import io.relaypinner.libp2p.core.NoSuchProtocolException;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.host.Connection;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.HostConfig;
import io.relaypinner.libp2p.host.Stream;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.orbitdb.BlockstoreFetcher;
import io.relaypinner.orbitdb.JavaWriter;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.orbitdb.OrbitDbReplica;
import io.relaypinner.orbitdb.ReplicasNode;
import io.relaypinner.orbitdb.ReplicaContext;
import io.relaypinner.orbitdb.identity.Identities;
import io.relaypinner.orbitdb.identity.IdentityVerifiers;
import io.relaypinner.orbitdb.log.Entry;
import io.relaypinner.orbitdb.log.LogConfig;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The heads exchange between two Java hosts over TCP, Noise and yamux on 127.0.0.1. */
class HeadsExchangeIT {
  private final EventLoops loops = EventLoops.create(2, "heads-it");
  private final ExecutorService executor = Executors.newFixedThreadPool(2);
  private final List<Host> hosts = new ArrayList<>();
  // What the writer side holds; the reader fetches from it as bitswap would.
  private final MemoryBlockstore writerStore = new MemoryBlockstore();

  @AfterEach
  void close() {
    hosts.forEach(Host::close);
    loops.shutdownGracefully(Duration.ofSeconds(3));
    executor.shutdownNow();
  }

  private Host host() throws Exception {
    final Host host = new Host(Keys.generate(KeyType.ED25519, new SecureRandom()),
        HostConfig.builder().listenAddresses(List.of(Multiaddr.parse("/ip4/127.0.0.1/tcp/0")))
            .agentVersion("relay-pinner/test").build(), loops, Clock.systemUTC());
    hosts.add(host);
    host.start().get(5, TimeUnit.SECONDS);
    return host;
  }

  private ReplicasNode replicas(final MemoryBlockstore store) {
    return new ReplicasNode(new ReplicaContext(store, new MemoryDatastore(),
        new BlockstoreFetcher(writerStore), new Identities(store, new BlockstoreFetcher(
            writerStore), IdentityVerifiers.defaults(), executor, 100), executor,
        LogConfig.DEFAULT), HeadsConfig.DEFAULT);
  }

  @Test
  void exchange_shouldReplicateLogBothWays_betweenJavaHosts() throws Exception {
    final JavaWriter writer = new JavaWriter();
    writerStore.put(writer.identityCid(), writer.identityBlock());
    final OrbitDbAddress address = JavaWriter.database(writerStore, "it", List.of(writer.id()));
    final List<Entry> chain = writer.chain(writerStore, address, 12);

    final Host a = host();
    final ReplicasNode aReplicas = replicas(writerStore);
    aReplicas.register(a.protocols());
    final OrbitDbReplica aReplica = aReplicas.follow(address).get(10, TimeUnit.SECONDS);
    aReplica.join(chain.get(11).cid()).get(10, TimeUnit.SECONDS);

    final Host b = host();
    final MemoryBlockstore bStore = new MemoryBlockstore();
    final ReplicasNode bReplicas = replicas(bStore);
    bReplicas.register(b.protocols());
    final OrbitDbReplica bReplica = bReplicas.follow(address).get(10, TimeUnit.SECONDS);

    final Connection connection = b.dial(a.listenAddresses().get(0).withPeerId(a.peerId()))
        .get(10, TimeUnit.SECONDS);
    final HeadsExchangeResult result = bReplicas.exchangeHeads(connection, address)
        .get(10, TimeUnit.SECONDS);

    assertThat(result.completed()).isTrue();
    assertThat(result.received()).isEqualTo(1);
    await().atMost(Duration.ofSeconds(10)).until(() -> bReplica.log().size() == 12);
    assertThat(bReplica.log().heads()).containsExactly(chain.get(11).cid());
    assertThat(bReplica.log().entries()).containsExactlyElementsOf(chain);
    assertThat(aReplicas.headsProtocol().counters()).containsEntry("heads-sent", 1L);
  }

  @Test
  void exchange_shouldFailWithNa_whenPeerDoesNotFollowTheDatabase() throws Exception {
    final JavaWriter writer = new JavaWriter();
    final OrbitDbAddress address = JavaWriter.database(writerStore, "na", List.of(writer.id()));
    final Host a = host();
    replicas(writerStore).register(a.protocols());
    final Host b = host();
    final ReplicasNode bReplicas = replicas(writerStore);
    bReplicas.follow(address).get(10, TimeUnit.SECONDS);
    final Connection connection = b.dial(a.listenAddresses().get(0).withPeerId(a.peerId()))
        .get(10, TimeUnit.SECONDS);
    assertThatThrownBy(() -> bReplicas.exchangeHeads(connection, address)
        .get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
        .hasCauseInstanceOf(NoSuchProtocolException.class);
  }

  @Test
  void listener_shouldCloseOnlyThatStream_whenPeerSendsGarbage() throws Exception {
    final JavaWriter writer = new JavaWriter();
    writerStore.put(writer.identityCid(), writer.identityBlock());
    final OrbitDbAddress address = JavaWriter.database(writerStore, "garbage",
        List.of(writer.id()));
    final List<Entry> chain = writer.chain(writerStore, address, 2);
    final Host a = host();
    final ReplicasNode aReplicas = replicas(writerStore);
    aReplicas.register(a.protocols());
    aReplicas.follow(address).get(10, TimeUnit.SECONDS).join(chain.get(1).cid())
        .get(10, TimeUnit.SECONDS);
    final Host b = host();
    final Connection connection = b.dial(a.listenAddresses().get(0).withPeerId(a.peerId()))
        .get(10, TimeUnit.SECONDS);

    final Stream stream = connection.newStream(List.of(address.headsProtocolId()),
        (channel, protocol) -> { }).get(10, TimeUnit.SECONDS);
    final Channel channel = stream.channel();
    channel.writeAndFlush(Unpooled.wrappedBuffer(new byte[] {(byte) 0xff, 0x00, 0x13}));
    // The listener closes its side: our stream sees its FIN (or reset).
    await().atMost(Duration.ofSeconds(10)).until(() -> !channel.isActive()
        || ((DuplexChannel) channel).isInputShutdown());
    assertThat(aReplicas.headsProtocol().counters()).containsEntry("closed-malformed", 1L);
    channel.close();
    assertThat(connection.isOpen()).isTrue();
    assertThat(b.ping(connection).get(10, TimeUnit.SECONDS)).isPositive();
    // A well-behaved exchange on the same connection still works.
    final ReplicasNode bReplicas = replicas(new MemoryBlockstore());
    final OrbitDbReplica bReplica = bReplicas.follow(address).get(10, TimeUnit.SECONDS);
    final HeadsExchangeResult result = bReplicas.exchangeHeads(connection, address)
        .get(10, TimeUnit.SECONDS);
    assertThat(result.completed()).isTrue();
    await().atMost(Duration.ofSeconds(10)).until(() -> bReplica.log().size() == 2);
  }
}
