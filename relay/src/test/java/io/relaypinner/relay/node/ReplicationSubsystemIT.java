package io.relaypinner.relay.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.ipfs.dagcbor.DagCbor;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.libp2p.transport.ws.ServerTlsSource;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.tls.CertificateStore;
import io.relaypinner.testkit.MutableClock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link ReplicationSubsystem} on memory storage, a network bound to 127.0.0.1 port 0 and a
 * {@link MutableClock}.
 */
class ReplicationSubsystemIT {
  @TempDir
  Path dir;

  private final MutableClock clock = NodeFixtures.clock();
  private final PrometheusRegistry registry = new PrometheusRegistry();
  private final EventLoops loops = EventLoops.create(1, "replication-it");
  private StorageSubsystem storage;
  private CertificateStore certificates;
  private NetworkSubsystem network;
  private ContentSubsystem content;

  @BeforeEach
  void setUp() {
    final RelayConfig config = NodeFixtures.config(dir);
    storage = NodeFixtures.memoryStorage(registry, clock);
    certificates = NodeFixtures.certificates(dir.resolve("tls"), clock);
    network = new NetworkSubsystem(config, NodeFixtures.IDENTITY,
        NodeFixtures.advertiser(config), List.of(), ServerTlsSource.NONE, certificates, loops,
        registry, clock, NodeTuning.DEFAULT);
    content = new ContentSubsystem(storage, network.host(), registry, clock,
        NodeTuning.DEFAULT);
  }

  @AfterEach
  void tearDown() {
    content.close();
    network.close();
    certificates.close();
    storage.close();
    loops.shutdownGracefully(Duration.ofSeconds(2));
  }

  @Test
  void replication_shouldWireTheSyncEngineTopicsAndService_andEndItsExecutor_whenClosed()
      throws Exception {
    final ReplicationSubsystem replication = new ReplicationSubsystem(
        NodeFixtures.config(dir), "peer", storage, network, content, registry, clock,
        NodeTuning.DEFAULT, NodeBudget.ofThisJvm(RelayConfig.DEFAULT));
    assertThat(replication.service()).isNotNull();
    assertThat(replication.topics().followed()).isEmpty();
    assertThat(replication.identityVerifiers()).isNotNull();
    assertThat(replication.syncEngine().inFlight()).isEmpty();
    assertThat(registry.scrape().stream().map(s -> s.getMetadata().getPrometheusName()))
        .contains("relay_pubsub_topics", "orbitdb_identity_verifications");
    final Thread worker = NodeFixtures.threadOf(replication.executor());

    replication.close();
    replication.close();

    assertThat(replication.executor().isTerminated()).isTrue();
    worker.join(5_000);
    assertThat(worker.isAlive()).isFalse();
  }

  /**
   * A restart: the persisted databases are resubscribed and synced only once the service runs.
   * Before, their syncs ran first, failed "replication is not running yet" and sat out their
   * 60 s cooldown.
   */
  @Test
  void persistedDatabases_shouldBeSyncedByTheRunningService_notFailIntoTheirCooldown()
      throws Exception {
    final String address = new OrbitDbAddress(DagCbor.cid("persisted".getBytes(
        StandardCharsets.UTF_8))).toString();
    storage.datastore().put("/relay/topics" + address, new byte[0]);
    try (ReplicationSubsystem replication = new ReplicationSubsystem(
        NodeFixtures.config(dir), "peer", storage, network, content, registry, clock,
        NodeTuning.DEFAULT, NodeBudget.ofThisJvm(RelayConfig.DEFAULT))) {
      assertThat(replication.topics().followed()).containsExactly(address);
      await().atMost(Duration.ofSeconds(5)).until(() ->
          replication.syncEngine().inFlight().contains(address)
              || !replication.syncEngine().recentProblems().isEmpty());
      assertThat(replication.syncEngine().recentProblems())
          .noneMatch(p -> p.message().contains("not running yet"));
    }
  }
}
