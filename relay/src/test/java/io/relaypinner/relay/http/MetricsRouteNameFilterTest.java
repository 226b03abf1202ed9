package io.relaypinner.relay.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpVersion;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.relay.api.MetricsRoute;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** {@code GET /metrics?name[]=...}: only the named families are collected and rendered. */
class MetricsRouteNameFilterTest {
  private final EmbeddedChannel channel = new EmbeddedChannel();
  private final PrometheusRegistry registry = new PrometheusRegistry();
  private final MetricsRoute route = new MetricsRoute(registry, Runnable::run);

  MetricsRouteNameFilterTest() {
    Counter.builder().name("relay_test_events").labelNames("event").register(registry)
        .labelValues("log.accepted").inc(3);
    Gauge.builder().name("relay_test_other").register(registry).set(7);
  }

  @AfterEach
  void tearDown() {
    channel.finishAndReleaseAll();
  }

  private String get(final String uri) {
    final FullHttpResponse response = route.handle(new RouteRequest(channel,
        new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, uri), "/metrics"))
        .join();
    try {
      return response.content().toString(StandardCharsets.UTF_8);
    } finally {
      response.release();
    }
  }

  @Test
  void handle_shouldRenderOnlyNamedFamilies_whenNameFilterGiven() {
    final String body = get("/metrics?name%5B%5D=relay_test_events_total");

    assertThat(body).contains("relay_test_events_total{event=\"log.accepted\"} 3.0")
        .doesNotContain("relay_test_other");
  }

  @Test
  void handle_shouldRenderEverything_whenNoFilterOrTooManyNames() {
    assertThat(get("/metrics")).contains("relay_test_events_total", "relay_test_other");
    final StringBuilder uri = new StringBuilder("/metrics?");
    for (int i = 0; i <= MetricsRoute.MAX_NAMES; i++) {
      uri.append("name%5B%5D=relay_test_other&");
    }
    assertThat(get(uri.toString())).contains("relay_test_events_total", "relay_test_other");
  }
}
