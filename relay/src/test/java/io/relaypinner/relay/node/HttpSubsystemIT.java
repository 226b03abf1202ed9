package io.relaypinner.relay.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.libp2p.transport.ws.ServerTlsSource;
import io.relaypinner.relay.autotls.AutoTlsOptions;
import io.relaypinner.relay.config.MetricsHttpsEndpoint;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.http.HttpResponses;
import io.relaypinner.relay.tls.CertificateStore;
import io.relaypinner.testkit.MutableClock;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link HttpSubsystem} on the other subsystems (memory storage, a network bound to 127.0.0.1
 * port 0) and a {@link MutableClock}: its listener answers, and closing it ends the listener,
 * the certificate store and the scrape thread.
 */
class HttpSubsystemIT {
  @TempDir
  Path dir;

  private final MutableClock clock = NodeFixtures.clock();
  private final PrometheusRegistry registry = new PrometheusRegistry();
  private final EventLoops loops = EventLoops.create(1, "http-it");
  private RelayConfig config;
  private StorageSubsystem storage;
  private CertificateStore certificates;
  private NetworkSubsystem network;
  private ContentSubsystem content;
  private ReplicationSubsystem replication;

  @BeforeEach
  void setUp() {
    config = NodeFixtures.config(dir);
    storage = NodeFixtures.memoryStorage(registry, clock);
    certificates = NodeFixtures.certificates(dir.resolve("tls"), clock);
    network = new NetworkSubsystem(config, NodeFixtures.IDENTITY,
        NodeFixtures.advertiser(config), List.of(), ServerTlsSource.NONE, certificates, loops,
        registry, clock, NodeTuning.DEFAULT);
    content = new ContentSubsystem(storage, network.host(), registry, clock,
        NodeTuning.DEFAULT);
    replication = new ReplicationSubsystem(config, "peer", storage, network, content, registry,
        clock, NodeTuning.DEFAULT, NodeBudget.ofThisJvm(RelayConfig.DEFAULT));
  }

  @AfterEach
  void tearDown() {
    for (final Subsystem subsystem : List.of(replication, content, network, storage)) {
      subsystem.stop();
    }
    for (final Subsystem subsystem : List.of(replication, content, network, storage)) {
      subsystem.close();
    }
    loops.shutdownGracefully(Duration.ofSeconds(2));
  }

  @Test
  void http_shouldServeTheRoutes_andCloseListenerCertificatesAndScrapeThread() throws Exception {
    final HttpSubsystem http = new HttpSubsystem(new HttpSubsystem.Settings(config,
        NodeFixtures.IDENTITY, new LiveStatus(NodeFixtures.IDENTITY, config.storage(),
            () -> network, () -> storage),
        MetricsHttpsEndpoint.resolve(config, NodeFixtures.IDENTITY.autoTlsServingZone()),
        HttpResponses.withMapperBuiltInBackground(), AutoTlsOptions.DEFAULT), certificates,
        storage, network, content, replication, loops, registry, clock, NodeTuning.DEFAULT);
    final int port = http.port().orElseThrow();
    final HttpResponse<String> health = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + port + "/health")).timeout(Duration.ofSeconds(10))
        .build(), HttpResponse.BodyHandlers.ofString());
    assertThat(health.statusCode()).isEqualTo(200);
    assertThat(health.body()).contains(NodeFixtures.IDENTITY.peerId().toBase58());
    assertThat(http.httpsPort()).isEmpty();
    assertThat(http.certificates()).isSameAs(certificates);
    // Not deployed: AutoTLS does not run.
    assertThat(http.autoTls()).isEmpty();
    assertThat(content.pinningService()).isPresent();

    http.close();
    http.close();

    assertThat(http.port()).isEmpty();
    try (Socket socket = new Socket()) {
      assertThatThrownBy(() -> socket.connect(new InetSocketAddress("127.0.0.1", port), 2_000))
          .isInstanceOf(ConnectException.class);
    }
  }
}
