package io.relaypinner.libp2p.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ConnectionLimitsTest {
  @Test
  void protocolLimit_shouldPreferExactIds_thenTheLongestPrefix_thenTheDefault() {
    final ConnectionLimits limits = ConnectionLimits.builder()
        .protocolStreamLimits(Map.of("/meshsub/*", 2, "/meshsub/1.2.0", 3, "/m*", 5))
        .defaultProtocolStreamLimit(7).build();
    assertThat(limits.protocolLimit("/meshsub/1.2.0")).isEqualTo(Map.entry("/meshsub/1.2.0", 3));
    assertThat(limits.protocolLimit("/meshsub/1.1.0")).isEqualTo(Map.entry("/meshsub/*", 2));
    assertThat(limits.protocolLimit("/mine/1")).isEqualTo(Map.entry("/m*", 5));
    assertThat(limits.protocolLimit("/other/1")).isEqualTo(Map.entry("/other/1", 7));
  }

  @Test
  void defaults_shouldMatchJsLibp2pForTheBuiltInProtocols() {
    final ConnectionLimits limits = ConnectionLimits.DEFAULT;
    assertThat(limits.protocolLimit("/ipfs/id/1.0.0").getValue()).isEqualTo(1);
    assertThat(limits.protocolLimit("/ipfs/id/push/1.0.0").getValue()).isEqualTo(1);
    assertThat(limits.protocolLimit("/ipfs/ping/1.0.0").getValue()).isEqualTo(2);
    assertThat(limits.protocolLimit("/meshsub/1.1.0").getValue()).isEqualTo(2);
    assertThat(limits.toBuilder().build()).isEqualTo(limits);
  }

  @Test
  void builder_shouldRejectOutOfRangeValues() {
    assertThatThrownBy(() -> ConnectionLimits.builder().maxConnections(0).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxConnections");
    assertThatThrownBy(() -> ConnectionLimits.builder().maxStreamsPerConnection(0).build())
        .hasMessageContaining("maxStreamsPerConnection");
    assertThatThrownBy(() -> ConnectionLimits.builder().handshakeTimeout(Duration.ZERO).build())
        .hasMessageContaining("handshakeTimeout");
    assertThatThrownBy(() -> ConnectionLimits.builder().idleTimeout(Duration.ofMillis(-1))
        .build()).hasMessageContaining("idleTimeout");
    assertThatThrownBy(() -> ConnectionLimits.builder().peerInboundBytesPerSecond(-1).build())
        .hasMessageContaining("peerInboundBytesPerSecond");
    assertThatThrownBy(() -> ConnectionLimits.builder()
        .protocolStreamLimits(Map.of("/x", -1)).build())
        .hasMessageContaining("protocolStreamLimits[/x]");
  }

  @Test
  void hostConfig_shouldUseTheStreamCapForYamux_andTheHandshakeTimeoutForUpgrades() {
    final HostConfig config = HostConfig.builder()
        .limits(ConnectionLimits.builder().maxStreamsPerConnection(17)
            .handshakeTimeout(Duration.ofSeconds(3)).build()).build();
    assertThat(config.effectiveYamux().maxInboundStreams()).isEqualTo(17);
    assertThat(config.upgradeTimeout()).isEqualTo(Duration.ofSeconds(3));
    assertThat(config.toBuilder().build()).isEqualTo(config);
  }

  @Test
  void limitLabels_shouldBeSnakeCase() {
    final LimitCounters counters = new LimitCounters();
    counters.hit(LimitCounters.Limit.MAX_CONNECTIONS);
    assertThat(counters.byLabel()).containsEntry("max_connections", 1L)
        .containsEntry("peer_inbound_bytes", 0L).hasSize(LimitCounters.Limit.values().length);
  }
}
