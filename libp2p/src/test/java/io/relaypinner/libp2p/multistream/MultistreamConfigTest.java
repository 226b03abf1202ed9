package io.relaypinner.libp2p.multistream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class MultistreamConfigTest {
  @Test
  void default_shouldMatchJsLimits() {
    final MultistreamConfig config = MultistreamConfig.DEFAULT;
    assertThat(config.timeout()).isEqualTo(Duration.ofSeconds(10));
    assertThat(config.maxMessageLength()).isEqualTo(1024);
    assertThat(config.maxProposals()).isEqualTo(32);
    assertThat(config.maxNegotiationBytes()).isEqualTo(16 * 1024);
  }

  @Test
  void toBuilder_shouldRoundTrip_whenValuesChanged() {
    final MultistreamConfig config = MultistreamConfig.builder()
        .timeout(Duration.ofMillis(1500))
        .maxMessageLength(256)
        .maxProposals(4)
        .maxNegotiationBytes(4096)
        .build();
    assertThat(config.toBuilder().build()).isEqualTo(config);
    assertThat(config.maxMessageLength()).isEqualTo(256);
  }

  @Test
  void build_shouldReject_whenValuesOutOfRange() {
    assertThatThrownBy(() -> MultistreamConfig.builder().timeout(Duration.ZERO).build())
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> MultistreamConfig.builder().timeout(null).build())
        .isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> MultistreamConfig.builder().maxMessageLength(18).build())
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> MultistreamConfig.builder().maxMessageLength(1025).build())
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> MultistreamConfig.builder().maxProposals(0).build())
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> MultistreamConfig.builder().maxNegotiationBytes(1000).build())
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(MultistreamConfig.builder().maxMessageLength(19).build().maxMessageLength())
        .isEqualTo(19);
  }

  @Test
  void exact_shouldMatchAndAdvertiseInOrder_whenIdsValid() {
    final ProtocolMatcher matcher = ProtocolMatcher.exact("/noise", "/yamux/1.0.0", "/noise");
    assertThat(matcher.matches("/noise")).isTrue();
    assertThat(matcher.matches("/noise/")).isFalse();
    assertThat(matcher.advertised()).containsExactly("/noise", "/yamux/1.0.0");
  }

  @Test
  void or_shouldCombineMatchersAndLists_whenExactAndPredicate() {
    final ProtocolMatcher matcher = ProtocolMatcher.exact("/ipfs/id/1.0.0")
        .or(ProtocolMatcher.matching(id -> id.startsWith("/orbitdb/heads/")))
        .or(ProtocolMatcher.exact(List.of("/ipfs/ping/1.0.0", "/ipfs/id/1.0.0")));
    assertThat(matcher.matches("/orbitdb/heads/orbitdb/zdpuX")).isTrue();
    assertThat(matcher.matches("/ipfs/ping/1.0.0")).isTrue();
    assertThat(matcher.matches("/meshsub/1.1.0")).isFalse();
    assertThat(matcher.advertised()).containsExactly("/ipfs/id/1.0.0", "/ipfs/ping/1.0.0");
  }

  @Test
  void exact_shouldReject_whenIdInvalid() {
    for (final String bad : new String[] {"", "na", "ls", "/multistream/1.0.0", "/a\nb"}) {
      assertThatThrownBy(() -> ProtocolMatcher.exact(bad)).as(bad)
          .isInstanceOf(IllegalArgumentException.class);
    }
    assertThat(MultistreamProtocol.checkProtocolId("/" + "x".repeat(1022))).hasSize(1023);
    assertThatThrownBy(() -> MultistreamProtocol.checkProtocolId("/" + "é".repeat(512)))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
