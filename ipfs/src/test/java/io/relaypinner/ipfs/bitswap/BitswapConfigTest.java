package io.relaypinner.ipfs.bitswap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class BitswapConfigTest {
  @Test
  void builder_shouldKeepEveryOtherValue_whenOneIsChanged() {
    final BitswapConfig config = BitswapConfig.DEFAULT.toBuilder().maxWantsPerPeer(7).build();

    assertThat(config.maxWantsPerPeer()).isEqualTo(7);
    assertThat(config.toBuilder().maxWantsPerPeer(BitswapConfig.DEFAULT.maxWantsPerPeer())
        .build()).isEqualTo(BitswapConfig.DEFAULT);
  }

  @Test
  void maxMessageSize_shouldLowerTheSendSize_whenSmallerThanIt() {
    final BitswapConfig config = BitswapConfig.builder().maxMessageSize(64 * 1024).build();

    assertThat(config.maxSendMessageSize()).isEqualTo(64 * 1024);
  }

  @Test
  void build_shouldNameTheValue_whenOneIsOutOfRange() {
    assertThatThrownBy(() -> BitswapConfig.builder().bytesPerTurn(0).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("bytesPerTurn");
    assertThatThrownBy(() -> BitswapConfig.builder().maxWantsPerPeer(-1).build())
        .hasMessageContaining("maxWantsPerPeer");
    assertThatThrownBy(() -> BitswapConfig.builder().rebroadcastInterval(Duration.ZERO).build())
        .hasMessageContaining("rebroadcastInterval");
    assertThatThrownBy(() -> BitswapConfig.builder().maxSendMessageSize(8 * 1024 * 1024)
        .build()).hasMessageContaining("maxSendMessageSize");
  }
}
