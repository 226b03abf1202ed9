package io.relaypinner.libp2p.mux.yamux;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.channel.WriteBufferWaterMark;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class YamuxConfigTest {
  @Test
  void defaults_shouldMatchTheSpecAndJsLibp2p() {
    final YamuxConfig c = YamuxConfig.DEFAULT;
    assertThat(c.initialStreamWindow()).isEqualTo(256 * 1024);
    assertThat(c.maxStreamWindow()).isEqualTo(16 * 1024 * 1024);
    assertThat(c.maxFramePayload()).isEqualTo(64 * 1024);
    assertThat(c.maxInboundStreams()).isEqualTo(1024);
    assertThat(c.maxOutboundStreams()).isEqualTo(1024);
    assertThat(c.maxAckBacklog()).isEqualTo(256);
    assertThat(c.keepAliveInterval()).isEqualTo(Duration.ofSeconds(30));
    assertThat(c.keepAliveTimeout()).isEqualTo(Duration.ofSeconds(20));
    assertThat(c.streamLingerTimeout()).isEqualTo(Duration.ofSeconds(30));
    assertThat(c.streamAllowHalfClosure()).isTrue();
    assertThat(c.maxStreamWriteBuffer()).isEqualTo(16L * 1024 * 1024);
    assertThat(c.streamWriteBufferWaterMark().high()).isEqualTo(256 * 1024);
    assertThat(c.maxPendingPingReplies()).isEqualTo(64);
  }

  @Test
  void toBuilder_shouldKeepEveryValue() {
    final YamuxConfig c =
        YamuxConfig.builder()
            .maxInboundStreams(7)
            .maxOutboundStreams(8)
            .maxAckBacklog(9)
            .initialStreamWindow(512 * 1024)
            .maxStreamWindow(1 << 20)
            .maxFramePayload(4096)
            .streamWriteBufferWaterMark(new WriteBufferWaterMark(10, 20))
            .maxStreamWriteBuffer(30)
            .streamAllowHalfClosure(false)
            .keepAliveInterval(Duration.ZERO)
            .keepAliveTimeout(Duration.ofSeconds(1))
            .streamLingerTimeout(Duration.ofSeconds(2))
            .maxPendingPingReplies(3)
            .build();
    assertThat(c.toBuilder().build()).hasToString(c.toString());
    assertThat(c.toString()).contains("maxInboundStreams=7", "maxFramePayload=4096");
  }

  @Test
  void builder_shouldRejectValuesOutOfRange() {
    final YamuxConfig.Builder b = YamuxConfig.builder();
    assertThatThrownBy(() -> b.maxInboundStreams(-1)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> b.maxAckBacklog(0)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> b.initialStreamWindow(256 * 1024 - 1))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> b.maxStreamWindow((1 << 30) + 1))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> b.maxFramePayload(1023)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> b.keepAliveInterval(Duration.ofSeconds(-1)))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> b.keepAliveTimeout(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> b.streamLingerTimeout(null)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> b.maxStreamWriteBuffer(0))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void build_shouldRejectInconsistentValues() {
    assertThatThrownBy(
            () ->
                YamuxConfig.builder()
                    .initialStreamWindow(1 << 20)
                    .maxStreamWindow(512 * 1024)
                    .build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("maxStreamWindow");
    assertThatThrownBy(() -> YamuxConfig.builder().maxStreamWriteBuffer(1000).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("high water mark");
  }
}
