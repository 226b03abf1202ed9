package io.relaypinner.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.relay.RelayNode;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.identity.NodeIdentity;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code relay-pinner status} against a running relay, and against nothing. */
class StatusCommandIT {
  private final StringWriter out = new StringWriter();
  private final StringWriter err = new StringWriter();

  private int execute(final Map<String, String> env, final String... args) {
    return Main.execute(args, env, new PrintWriter(out, true), new PrintWriter(err, true));
  }

  @Test
  void status_shouldSummarizeARunningRelay(@TempDir final Path dir) {
    final PrivateKey key = Keys.generate(KeyType.ED25519, new SecureRandom());
    final NodeIdentity identity = new NodeIdentity(key, key.publicKey().peerId(),
        NodeIdentity.servingZone(key.publicKey().peerId(), "libp2p.direct"),
        NodeIdentity.Source.ENVIRONMENT);
    try (RelayNode relay = new RelayNode(RelayConfig.builder().dataDir(dir)
        .metricsHost("127.0.0.1").metricsPort(0).listenIpv4("127.0.0.1").tcpPort(0).wsPort(0)
        .quicPort(0)
        .ipv6Disabled(true).build(), identity, new PrometheusRegistry(), Clock.systemUTC())) {
      relay.start();
      final int port = relay.http().port().getAsInt();
      assertThat(execute(Map.of("METRICS_PORT", String.valueOf(port)), "status"))
          .as(err.toString()).isZero();
      assertThat(out.toString())
          .contains("at http://127.0.0.1:" + port + ": ok")
          .contains("peer id      " + identity.peerId().toBase58())
          .contains("mode         development")
          .contains("connections  0")
          .contains("sync         0 active of 2 slots")
          .contains("databases    0")
          .contains("problems     none")
          .containsPattern("/ip4/127\\.0\\.0\\.1/tcp/\\d+/p2p/" + identity.peerId().toBase58());
    }
  }

  @Test
  void status_shouldExitOne_whenNothingAnswers() throws Exception {
    final int port;
    try (ServerSocket socket = new ServerSocket(0)) {
      port = socket.getLocalPort();
    }
    assertThat(execute(Map.of(), "status", "--url", "http://127.0.0.1:" + port)).isEqualTo(1);
    assertThat(err.toString()).contains("relay-pinner status: no answer from http://127.0.0.1:"
        + port);
  }

  @Test
  void status_shouldRefuseAUrlThatIsNotHttp() {
    assertThat(execute(Map.of(), "status", "--url", "ftp://x")).isEqualTo(2);
    assertThat(err.toString()).contains("--url: an http:// or https:// URL is needed");
  }
}
