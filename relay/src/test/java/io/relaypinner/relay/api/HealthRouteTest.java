package io.relaypinner.relay.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.handler.codec.http.FullHttpResponse;
import io.relaypinner.relay.config.MetricsHttpsEndpoint;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.http.HttpResponses;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import org.junit.jupiter.api.Test;

class HealthRouteTest {
  private static final String ZONE = "k51qzi5uqu5dexample.libp2p.direct";
  private static final Clock CLOCK =
      Clock.fixed(Instant.parse("2026-11-22T10:00:00.120Z"), ZoneId.of("Europe/Berlin"));

  private final NodeStatus status = new NodeStatus() {
    @Override
    public String peerId() {
      return "12D3KooWExample";
    }

    @Override
    public String autoTlsServingZone() {
      return ZONE;
    }

    @Override
    public int activeConnections() {
      return 3;
    }

    @Override
    public int multiaddrCount() {
      return 5;
    }
  };

  @Test
  void handle_shouldWriteEveryFieldInSpecOrder_whenHttpsIsNotListening() {
    final RelayConfig config = RelayConfig.builder().metricsHttpsEnabled(true)
        .publicIpv4("203.0.113.8").externalMetricsHttpsPort(29443).build();
    final MetricsHttpsStatus https =
        MetricsHttpsStatus.notListening(true, MetricsHttpsEndpoint.resolve(config, ZONE));
    final HealthRoute route = new HealthRoute("1.2.3", status, () -> https, CLOCK,
        new HttpResponses(HttpResponses.newObjectMapper()));

    final FullHttpResponse response = route.handle(null).join();
    try {
      assertThat(response.content().toString(StandardCharsets.UTF_8)).isEqualTo("{"
          + "\"status\":\"ok\",\"version\":\"1.2.3\",\"peerId\":\"12D3KooWExample\","
          + "\"connections\":{\"active\":3},\"multiaddrs\":5,"
          + "\"autoTlsServingZone\":\"" + ZONE + "\","
          + "\"metricsHttps\":{\"enabled\":true,\"listening\":false,\"port\":null,"
          + "\"internalPort\":9443,\"externalPort\":29443,\"host\":\"203-0-113-8." + ZONE + "\","
          + "\"exampleUrl\":null,"
          + "\"internalExampleUrl\":\"https://203-0-113-8." + ZONE + ":9443/health\"},"
          + "\"timestamp\":\"2026-11-22T10:00:00.120Z\"}");
    } finally {
      response.release();
    }
  }

  @Test
  void listening_shouldReportBoundAndExternalPorts_whenHttpsListenerIsUp() {
    final RelayConfig config = RelayConfig.builder().metricsHttpsEnabled(true)
        .metricsHttpsPort(0).build();
    final MetricsHttpsStatus https =
        MetricsHttpsStatus.listening(MetricsHttpsEndpoint.resolve(config, ZONE), 40443);
    assertThat(https.listening()).isTrue();
    assertThat(https.port()).isEqualTo(40443);
    assertThat(https.internalPort()).isEqualTo(40443);
    assertThat(https.externalPort()).isEqualTo(40443);
    assertThat(https.exampleUrl()).isEqualTo("https://127-0-0-1." + ZONE + ":40443/health");
  }

  @Test
  void timestamp_shouldAlwaysHaveMilliseconds_whenInstantIsOnTheSecond() {
    assertThat(Timestamps.now(Clock.fixed(Instant.parse("2026-01-02T03:04:05Z"),
        ZoneId.of("UTC")))).isEqualTo("2026-01-02T03:04:05.000Z");
  }
}
