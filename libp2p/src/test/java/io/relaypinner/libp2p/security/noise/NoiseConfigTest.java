package io.relaypinner.libp2p.security.noise;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

class NoiseConfigTest {
  @Test
  void default_shouldMatchJsLibp2pNoise() {
    assertThat(NoiseConfig.DEFAULT.handshakeTimeout()).isEqualTo(Duration.ofSeconds(10));
    assertThat(NoiseConfig.DEFAULT.streamMuxers()).containsExactly("/yamux/1.0.0");
    assertThat(NoiseConfig.DEFAULT.maxMessageLength()).isEqualTo(65535);
    assertThat(NoiseConfig.DEFAULT.maxPlaintextLength()).isEqualTo(65519);
  }

  @Test
  void toBuilder_shouldRoundTrip() {
    final NoiseConfig config =
        NoiseConfig.builder()
            .handshakeTimeout(Duration.ofSeconds(3))
            .streamMuxers(List.of())
            .maxMessageLength(4096)
            .build();
    assertThat(config.toBuilder().build()).isEqualTo(config);
  }

  @Test
  void build_shouldReject_whenTimeoutIsNotPositive() {
    assertThatThrownBy(() -> NoiseConfig.builder().handshakeTimeout(Duration.ZERO).build())
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> NoiseConfig.builder().handshakeTimeout(Duration.ofSeconds(-1)).build())
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void build_shouldReject_whenMaxMessageLengthIsOutOfRange() {
    assertThatThrownBy(() -> NoiseConfig.builder().maxMessageLength(1023).build())
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> NoiseConfig.builder().maxMessageLength(65536).build())
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void build_shouldReject_whenMuxerListIsInvalid() {
    for (final List<String> muxers :
        List.of(
            List.of(""),
            List.of("yamux"),
            List.of("/yamux\n"),
            List.of("/a", "/a"),
            Collections.nCopies(NoiseConfig.MAX_STREAM_MUXERS + 1, "/x"))) {
      assertThatThrownBy(() -> NoiseConfig.builder().streamMuxers(muxers).build())
          .as("%s", muxers)
          .isInstanceOf(IllegalArgumentException.class);
    }
  }
}
