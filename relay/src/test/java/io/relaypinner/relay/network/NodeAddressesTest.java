package io.relaypinner.relay.network;

import static org.assertj.core.api.Assertions.assertThat;

import io.relaypinner.multiformats.Multiaddr;
import org.junit.jupiter.api.Test;

class NodeAddressesTest {
  @Test
  void isDialable_shouldRefusePrivateAndDocumentationAddresses() {
    assertThat(NodeAddresses.isDialable(Multiaddr.parse("/ip4/1.2.3.4/tcp/4001"))).isTrue();
    assertThat(NodeAddresses.isDialable(Multiaddr.parse("/ip6/2a01:4f8::1/tcp/4001"))).isTrue();
    assertThat(NodeAddresses.isDialable(Multiaddr.parse("/ip4/10.0.0.1/tcp/4001"))).isFalse();
    assertThat(NodeAddresses.isDialable(Multiaddr.parse("/ip4/127.0.0.1/tcp/4001"))).isFalse();
    assertThat(NodeAddresses.isDialable(Multiaddr.parse("/ip4/203.0.113.8/tcp/4001"))).isFalse();
    assertThat(NodeAddresses.isDialable(Multiaddr.parse("/ip4/198.51.100.4/tcp/4001/ws")))
        .isFalse();
    assertThat(NodeAddresses.isDialable(Multiaddr.parse("/ip4/192.0.2.1/tcp/4001"))).isFalse();
    assertThat(NodeAddresses.isDialable(Multiaddr.parse("/ip6/2001:db8::7/tcp/4001"))).isFalse();
  }
}
