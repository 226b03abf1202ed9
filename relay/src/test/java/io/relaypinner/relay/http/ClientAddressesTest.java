package io.relaypinner.relay.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import io.relaypinner.common.budget.IpPrefix;
import io.relaypinner.common.budget.IpRange;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;

class ClientAddressesTest {
  private static final IpRange PROXIES = IpRange.parse("10.0.0.0/8");
  private final ClientAddresses clients = new ClientAddresses(PROXIES::contains,
      IpPrefix.DEFAULT::key);

  private static InetAddress ip(final String text) throws Exception {
    return InetAddress.getByName(text);
  }

  private static HttpHeaders xff(final String... values) {
    final HttpHeaders headers = new DefaultHttpHeaders();
    for (final String v : values) {
      headers.add(ClientAddresses.X_FORWARDED_FOR, v);
    }
    return headers;
  }

  @Test
  void connectionKey_shouldBeNull_forATrustedProxy_andTheIpKeyOtherwise() throws Exception {
    assertThat(clients.connectionKey(ip("10.1.2.3"))).isNull();
    assertThat(clients.connectionKey(ip("192.0.2.7"))).isEqualTo("192.0.2.7/32");
    assertThat(clients.connectionKey(ip("2001:db8:1:2::9"))).isEqualTo("2001:db8:1:2:0:0:0:0/64");
  }

  @Test
  void client_shouldIgnoreForwardedFor_whenTheRemoteIsNoTrustedProxy() throws Exception {
    assertThat(clients.client(ip("192.0.2.7"), xff("198.51.100.1"))).isEqualTo(ip("192.0.2.7"));
  }

  @Test
  void client_shouldBeTheRightmostUntrustedHop_behindTrustedProxies() throws Exception {
    // The client wrote "203.0.113.66" itself; the proxies appended 198.51.100.1 and 10.0.0.2.
    assertThat(clients.client(ip("10.0.0.1"), xff("203.0.113.66, 198.51.100.1", "10.0.0.2")))
        .isEqualTo(ip("198.51.100.1"));
    assertThat(clients.client(ip("10.0.0.1"), xff("[2001:db8::5]:443")))
        .isEqualTo(ip("2001:db8::5"));
    assertThat(clients.client(ip("10.0.0.1"), xff("198.51.100.1:5678")))
        .isEqualTo(ip("198.51.100.1"));
  }

  @Test
  void client_shouldBeTheLastTrustedHop_whenForwardedForIsMissingOrNotAnAddress()
      throws Exception {
    assertThat(clients.client(ip("10.0.0.1"), xff())).isEqualTo(ip("10.0.0.1"));
    assertThat(clients.client(ip("10.0.0.1"), xff("198.51.100.1, unknown")))
        .isEqualTo(ip("10.0.0.1"));
    // A DNS name is never resolved.
    assertThat(clients.client(ip("10.0.0.1"), xff("evil.example, 10.0.0.9")))
        .isEqualTo(ip("10.0.0.9"));
  }

  @Test
  void requestKey_shouldKeyTheForwardedClient_byItsPrefix() throws Exception {
    assertThat(clients.requestKey(new InetSocketAddress(ip("10.0.0.1"), 4000),
        xff("2001:db8:1:2::7"))).isEqualTo("2001:db8:1:2:0:0:0:0/64");
    assertThat(clients.requestKey(new InetSocketAddress(ip("192.0.2.7"), 4000),
        xff("2001:db8:1:2::7"))).isEqualTo("192.0.2.7/32");
    assertThat(ClientAddresses.DIRECT.requestKey(new InetSocketAddress(ip("10.0.0.1"), 1),
        xff("198.51.100.1"))).isEqualTo("10.0.0.1");
  }
}
