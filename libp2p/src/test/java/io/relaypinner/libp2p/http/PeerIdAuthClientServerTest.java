package io.relaypinner.libp2p.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.multiformats.PeerId;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@link PeerIdAuthClient} against {@link PeerIdAuthServer} behind the JDK HTTP server. */
class PeerIdAuthClientServerTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(10);
  private final SecureRandom random = new SecureRandom();
  private final PrivateKey serverKey = Keys.generate(KeyType.ED25519, random);
  private final PrivateKey clientKey = Keys.generate(KeyType.ED25519, random);
  private final PeerIdAuthServer auth = new PeerIdAuthServer(serverKey, Duration.ofHours(1),
      random, Clock.systemUTC());
  private final List<PeerId> served = new CopyOnWriteArrayList<>();
  private final List<String> bodies = new CopyOnWriteArrayList<>();
  private final AtomicBoolean serverInitiatedOnly = new AtomicBoolean();
  private HttpServer server;
  private PeerIdAuthClient client;

  @BeforeEach
  void start() throws IOException {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/v1/thing", this::handle);
    server.start();
    client = new PeerIdAuthClient(clientKey, HttpClient.newHttpClient(), random,
        Clock.systemUTC(), 65_536);
  }

  @AfterEach
  void stop() {
    server.stop(0);
  }

  private void handle(final HttpExchange exchange) throws IOException {
    String authorization = exchange.getRequestHeaders().getFirst("Authorization");
    if (serverInitiatedOnly.get() && authorization != null && !authorization.contains("opaque")
        && !authorization.contains("bearer")) {
      authorization = null;
    }
    final byte[] body = exchange.getRequestBody().readAllBytes();
    final PeerIdAuthServer.Outcome outcome = auth.handle(
        exchange.getRequestHeaders().getFirst("Host"), authorization);
    if (outcome instanceof PeerIdAuthServer.Authenticated ok) {
      served.add(ok.peer());
      bodies.add(new String(body, StandardCharsets.UTF_8));
      if (ok.authenticationInfo() != null) {
        exchange.getResponseHeaders().add("Authentication-Info", ok.authenticationInfo());
      }
      final byte[] answer = ("hello " + ok.peer()).getBytes(StandardCharsets.UTF_8);
      exchange.sendResponseHeaders(200, answer.length);
      exchange.getResponseBody().write(answer);
    } else {
      final String www = outcome instanceof PeerIdAuthServer.Challenge c ? c.wwwAuthenticate()
          : ((PeerIdAuthServer.Rejected) outcome).wwwAuthenticate();
      exchange.getResponseHeaders().add("WWW-Authenticate", www);
      exchange.sendResponseHeaders(401, -1);
    }
    exchange.close();
  }

  private URI uri() {
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/v1/thing");
  }

  private PeerIdAuthClient.Response post(final String body) throws Exception {
    return client.send("POST", uri(), Map.of("Content-Type", "application/json"),
        body.getBytes(StandardCharsets.UTF_8), TIMEOUT);
  }

  @Test
  void send_shouldAuthenticateBothSides_withTheClientInitiatedHandshake() throws Exception {
    final PeerIdAuthClient.Response response = post("{\"a\":1}");
    assertThat(response.status()).isEqualTo(200);
    assertThat(response.server()).contains(serverKey.publicKey().peerId());
    assertThat(served).containsExactly(clientKey.publicKey().peerId());
    assertThat(bodies).containsExactly("{\"a\":1}");
  }

  @Test
  void send_shouldReuseTheBearerToken_forTheNextRequest() throws Exception {
    post("one");
    final PeerIdAuthClient.Response second = post("two");
    assertThat(second.status()).isEqualTo(200);
    assertThat(second.server()).contains(serverKey.publicKey().peerId());
    assertThat(served).hasSize(2).containsOnly(clientKey.publicKey().peerId());
    assertThat(bodies).containsExactly("one", "two");
  }

  @Test
  void send_shouldFollowTheServerInitiatedHandshake_whenTheServerIgnoresTheOpening()
      throws Exception {
    serverInitiatedOnly.set(true);
    final PeerIdAuthClient.Response response = post("body");
    assertThat(response.status()).isEqualTo(200);
    assertThat(response.server()).contains(serverKey.publicKey().peerId());
    assertThat(bodies).containsExactly("body");
  }

  @Test
  void send_shouldFail_whenTheServerCannotProveItsKey() throws Exception {
    server.removeContext("/v1/thing");
    server.createContext("/v1/thing", exchange -> {
      // An impostor: it signs with a key other than the one it names.
      final PrivateKey other = Keys.generate(KeyType.ED25519, random);
      final String challengeServer;
      try {
        challengeServer = AuthParams.parse(exchange.getRequestHeaders()
            .getFirst("Authorization")).orElseThrow().get("challenge-server").orElse("x");
      } catch (final PeerIdAuthException e) {
        throw new IOException(e);
      }
      exchange.getResponseHeaders().add("WWW-Authenticate", AuthParams.of(Map.of(
          "challenge-client", "abc", "public-key",
          PeerIdAuth.encode(serverKey.publicKey().marshal()), "opaque", "o",
          "sig", PeerIdAuth.sign(other, Map.of("challenge-server", challengeServer,
              "client-public-key", clientKey.publicKey().marshal(), "hostname", "x"))))
          .format());
      exchange.sendResponseHeaders(401, -1);
      exchange.close();
    });
    assertThatThrownBy(() -> post("secret")).isInstanceOf(PeerIdAuthException.class)
        .hasMessageContaining("does not verify");
  }

  @Test
  void server_shouldRejectForgedExpiredOrMisdirectedOpaqueValues() throws Exception {
    final String clientPk = PeerIdAuth.encode(clientKey.publicKey().marshal());
    final PeerIdAuthServer.Challenge challenge = (PeerIdAuthServer.Challenge) auth.handle(
        "a.example", AuthParams.of(Map.of("challenge-server", "c", "public-key", clientPk))
            .format());
    final AuthParams www = AuthParams.parse(challenge.wwwAuthenticate()).orElseThrow();
    final String opaque = www.get("opaque").orElseThrow();
    final String sig = PeerIdAuth.sign(clientKey, Map.of("challenge-client",
        www.get("challenge-client").orElseThrow(), "server-public-key",
        serverKey.publicKey().marshal(), "hostname", "a.example"));
    // Presented to another host name.
    assertThat(auth.handle("b.example", AuthParams.of(Map.of("opaque", opaque, "sig", sig))
        .format())).isInstanceOf(PeerIdAuthServer.Rejected.class);
    // Tampered opaque.
    final byte[] raw = PeerIdAuth.decode(opaque);
    raw[raw.length - 1] ^= 1;
    assertThat(auth.handle("a.example", AuthParams.of(Map.of("opaque", PeerIdAuth.encode(raw),
        "sig", sig)).format())).isInstanceOf(PeerIdAuthServer.Rejected.class);
    // Too late: a server whose clock is two minutes on.
    final PeerIdAuthServer later = new PeerIdAuthServer(serverKey, Duration.ofHours(1), random,
        Clock.fixed(Instant.now().plus(Duration.ofMinutes(2)), ZoneOffset.UTC));
    assertThat(later.handle("a.example", AuthParams.of(Map.of("opaque", opaque, "sig", sig))
        .format())).isInstanceOf(PeerIdAuthServer.Rejected.class);
    // The genuine one passes.
    assertThat(auth.handle("a.example", AuthParams.of(Map.of("opaque", opaque, "sig", sig))
        .format())).isInstanceOf(PeerIdAuthServer.Authenticated.class);
  }
}
