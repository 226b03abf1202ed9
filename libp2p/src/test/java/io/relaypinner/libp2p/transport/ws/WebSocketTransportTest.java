package io.relaypinner.libp2p.transport.ws;

import static org.assertj.core.api.Assertions.assertThat;

import io.relaypinner.multiformats.Multiaddr;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class WebSocketTransportTest {
  @ParameterizedTest
  @ValueSource(strings = {"/ip4/127.0.0.1/tcp/1/ws", "/ip6/::1/tcp/1/ws",
      "/ip4/127.0.0.1/tcp/1/tls/ws", "/ip4/127.0.0.1/tcp/1/wss",
      "/ip4/127.0.0.1/tcp/1/tls/sni/localhost/ws",
      "/ip4/127.0.0.1/tcp/1/tls/ws/p2p/12D3KooWDpJ7As7BWAwRMfu1VU2WCqNjvq387JEYKDBj4kx6nXTN"})
  void handles_shouldAcceptPlainAndTlsWebSocketAddresses(final String address) {
    assertThat(WebSocketTransport.handles(Multiaddr.parse(address))).isTrue();
  }

  @ParameterizedTest
  @ValueSource(strings = {"/ip4/127.0.0.1/tcp/1", "/ip4/127.0.0.1/tcp/1/tls",
      "/ip4/127.0.0.1/tcp/1/ws/tls", "/dns4/example.org/tcp/443/tls/ws",
      "/ip4/127.0.0.1/udp/1/ws", "/ip4/127.0.0.1/tcp/1/tls/sni/localhost/wss"})
  void handles_shouldRejectOtherShapes(final String address) {
    assertThat(WebSocketTransport.handles(Multiaddr.parse(address))).isFalse();
  }
}
