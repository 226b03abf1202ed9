package io.relaypinner.handoff.guest;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class GuestAddressesTest {
  private static final String PEER = "12D3KooWDpJ7As7BWAwRMfu1VU2WCqNjvq387JEYKDBj4kx6nXTN";
  private static final String P2P = "/p2p/" + PEER;

  private static ConfigureRequest request(final String json) throws Exception {
    return ConfigureRequest.parse(json.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void predict_shouldListQuicOnTheMappedPort_andIpv6OnTheRelaysOwn_whenQuicPortIsGiven()
      throws Exception {
    final GuestAddresses addresses = GuestAddresses.predict(request("{\"public_ipv4\":"
        + "\"198.51.100.4\",\"public_ipv6\":\"2001:db8::7\",\"tcp_port\":29091,"
        + "\"ws_port\":29092,\"quic_port\":29094}"), PEER, 9091, 9092, 9094);
    assertThat(addresses.quic()).containsExactly(
        "/ip4/198.51.100.4/udp/29094/quic-v1" + P2P,
        "/ip6/2001:db8::7/udp/9094/quic-v1" + P2P);
    assertThat(addresses.all()).endsWith("/ip4/198.51.100.4/udp/29094/quic-v1" + P2P,
        "/ip6/2001:db8::7/udp/9094/quic-v1" + P2P);
  }

  @Test
  void predict_shouldListNoQuic_whenNoQuicPortIsMapped_orTheRelayHasNoQuicListener()
      throws Exception {
    assertThat(GuestAddresses.predict(request("{\"public_ipv4\":\"198.51.100.4\","
        + "\"tcp_port\":29091,\"ws_port\":29092}"), PEER, 9091, 9092, 9094).quic()).isEmpty();
    assertThat(GuestAddresses.predict(request("{\"public_ipv4\":\"198.51.100.4\","
        + "\"tcp_port\":29091,\"ws_port\":29092,\"quic_port\":29094}"), PEER, 9091, 9092, -1)
        .quic()).isEmpty();
  }

  @Test
  void settings_shouldReadTheRelaysQuicPort_andNoneWhenQuicIsDisabled() {
    assertThat(GuestAgent.Settings.fromEnvironment(java.util.Map.of()).internalQuicPort())
        .isEqualTo(9094);
    assertThat(GuestAgent.Settings.fromEnvironment(java.util.Map.of("RELAY_QUIC_PORT", "4005"))
        .internalQuicPort()).isEqualTo(4005);
    assertThat(GuestAgent.Settings.fromEnvironment(java.util.Map.of("RELAY_DISABLE_QUIC",
        "true")).internalQuicPort()).isEqualTo(-1);
  }
}
