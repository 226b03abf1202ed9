package io.relaypinner.relay.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class IpfsGatewayRouteTest {
  @Test
  void decode_shouldDecodeUtf8Escapes_andKeepPlus() {
    assertThat(IpfsGatewayRoute.decode("caf%C3%A9+x.jpg")).isEqualTo("café+x.jpg");
    assertThat(IpfsGatewayRoute.decode("plain")).isEqualTo("plain");
  }

  @Test
  void decode_shouldReject_truncatedNonHexAndNonUtf8Escapes() {
    assertThatThrownBy(() -> IpfsGatewayRoute.decode("a%4"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> IpfsGatewayRoute.decode("%G1"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> IpfsGatewayRoute.decode("%C3%28"))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
