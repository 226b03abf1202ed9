package io.relaypinner.libp2p.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.netty.handler.ssl.SslContext;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.host.LimitCounters.Limit;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.libp2p.transport.ws.ServerTlsSource;
import io.relaypinner.multiformats.Multiaddr;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * TLS on the WebSocket port, detected per connection: {@code /tls/ws} and {@code /ws} on the same
 * listener, the certificate taken anew for every connection, the handshake deadline covering a
 * stalled TLS handshake.
 */
class WebSocketTlsIT {
  private static final Duration WAIT = Duration.ofSeconds(10);
  private final SecureRandom random = new SecureRandom();
  private final EventLoops loops = EventLoops.create(2, "ws-tls-it");
  private final List<Host> hosts = new CopyOnWriteArrayList<>();
  private final TestCertificates ca = TestCertificates.newAuthority("relay-pinner test CA");
  private final AtomicReference<Optional<SslContext>> certificate =
      new AtomicReference<>(Optional.empty());

  @AfterEach
  void close() {
    hosts.forEach(Host::close);
    loops.shutdownGracefully(Duration.ofSeconds(3));
  }

  private Host server(final Duration handshakeTimeout) throws Exception {
    final ServerTlsSource source = certificate::get;
    final Host host = new Host(Keys.generate(KeyType.ED25519, random), HostConfig.builder()
        .listenAddresses(List.of(Multiaddr.parse("/ip4/127.0.0.1/tcp/0/ws")))
        .upgradeTimeout(handshakeTimeout)
        .webSocketTls(source).build(), loops, Clock.systemUTC());
    hosts.add(host);
    host.start().get(5, TimeUnit.SECONDS);
    return host;
  }

  private Host client(final SslContext trust) {
    final Host host = new Host(Keys.generate(KeyType.ED25519, random), HostConfig.builder()
        .webSocketClientTls(trust).build(), loops, Clock.systemUTC());
    hosts.add(host);
    return host;
  }

  private static Multiaddr address(final Host server, final String suffix) {
    final Multiaddr ws = server.listenAddresses().get(0);
    final String text = ws.toString();
    return Multiaddr.parse(text.substring(0, text.length() - "/ws".length()) + suffix)
        .withPeerId(server.peerId());
  }

  @Test
  void dialTlsWs_shouldIdentifyPingAndEcho_whilePlainWsWorksOnTheSamePort() throws Exception {
    certificate.set(Optional.of(ca.serverContext()));
    final Host server = server(Duration.ofSeconds(10));
    EchoStreams.serve(server);
    final Host client = client(ca.clientContext());

    final Connection secure = client.dial(address(server, "/tls/ws")).get(10, TimeUnit.SECONDS);
    assertThat(secure.remoteAddress().toString()).endsWith("/tls/ws");
    assertThat(client.identify(secure).get(10, TimeUnit.SECONDS).agentVersion()).isPresent();
    assertThat(client.ping(secure).get(10, TimeUnit.SECONDS)).isPositive();
    final EchoStreams.Echo echo = EchoStreams.roundTrip(secure, new byte[300_000])
        .get(10, TimeUnit.SECONDS);
    assertThat(echo.bytes()).isEqualTo(300_000);
    await().atMost(WAIT).until(() -> server.connections().stream()
        .anyMatch(c -> c.remoteAddress().toString().endsWith("/tls/ws")));

    final Connection wss = client.dial(address(server, "/wss")).get(10, TimeUnit.SECONDS);
    assertThat(client.ping(wss).get(10, TimeUnit.SECONDS)).isPositive();
    final Connection sni = client.dial(address(server, "/tls/sni/localhost/ws"))
        .get(10, TimeUnit.SECONDS);
    assertThat(client.ping(sni).get(10, TimeUnit.SECONDS)).isPositive();

    final Connection plain = client(ca.clientContext()).dial(address(server, "/ws"))
        .get(10, TimeUnit.SECONDS);
    assertThat(plain.remoteAddress().toString()).endsWith("/ws").doesNotContain("/tls");
    assertThat(client.ping(plain).get(10, TimeUnit.SECONDS)).isPositive();
  }

  @Test
  void dialTlsWs_shouldFail_whenTheClientDoesNotTrustTheCertificate() throws Exception {
    certificate.set(Optional.of(ca.serverContext()));
    final Host server = server(Duration.ofSeconds(10));
    final Host client = client(TestCertificates.newAuthority("another CA").clientContext());
    assertThatThrownBy(() -> client.dial(address(server, "/tls/ws")).get(10, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class);
    assertThat(client.connectionCount()).isZero();
    assertThat(server.connectionCount()).isZero();
  }

  @Test
  void newConnections_shouldUseTheCurrentCertificate_whenItAppearsOrIsReplaced()
      throws Exception {
    final Host server = server(Duration.ofSeconds(10));
    final Host client = client(ca.clientContext());
    // No certificate yet: TLS is not spoken on the port.
    assertThatThrownBy(() -> client.dial(address(server, "/tls/ws")).get(10, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class);

    certificate.set(Optional.of(ca.serverContext()));
    final Connection first = client.dial(address(server, "/tls/ws")).get(10, TimeUnit.SECONDS);
    assertThat(client.ping(first).get(10, TimeUnit.SECONDS)).isPositive();

    final TestCertificates otherCa = TestCertificates.newAuthority("replacement CA");
    certificate.set(Optional.of(otherCa.serverContext()));
    // The open connection carries on; a new one gets the replacement, which only its CA trusts.
    assertThat(client.ping(first).get(10, TimeUnit.SECONDS)).isPositive();
    assertThatThrownBy(() -> client.dial(address(server, "/tls/ws")).get(10, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class);
    final Connection second = client(otherCa.clientContext())
        .dial(address(server, "/tls/ws")).get(10, TimeUnit.SECONDS);
    assertThat(second.isOpen()).isTrue();
  }

  @Test
  void stalledTlsHandshake_shouldBeClosedAndCounted_byTheHandshakeDeadline() throws Exception {
    certificate.set(Optional.of(ca.serverContext()));
    final Host server = server(Duration.ofMillis(500));
    final Multiaddr ws = server.listenAddresses().get(0);
    try (Socket socket = new Socket("127.0.0.1", ws.components().get(1).port())) {
      socket.setSoTimeout(15_000);
      final OutputStream out = socket.getOutputStream();
      // The start of a TLS record holding a ClientHello, then silence.
      out.write(new byte[] {0x16, 0x03, 0x01, 0x02, 0x00, 0x01});
      out.flush();
      final InputStream in = socket.getInputStream();
      final byte[] buffer = new byte[256];
      try {
        while (in.read(buffer) >= 0) {
          // drain until the server closes
        }
      } catch (final java.net.SocketException reset) {
        // a reset is a close too
      }
    }
    await().atMost(WAIT).until(() -> server.limitCounters().get(Limit.HANDSHAKE_TIMEOUT) == 1);
    assertThat(server.openTransportConnections()).isZero();
  }
}
