package io.relaypinner.relay.autotls;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.host.Connection;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.HostConfig;
import io.relaypinner.libp2p.http.PeerIdAuth;
import io.relaypinner.libp2p.http.PeerIdAuthServer;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.PeerId;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A stand-in for the libp2p.direct broker (p2p-forge's registration API) on loopback:
 * {@code POST /v1/_acme-challenge} behind PeerID authentication (the server side of
 * http/peer-id-auth.md), the body checked as p2p-forge does (a base64url SHA-256 value, known
 * fields only), the peer dialled back over libp2p on one of its addresses (its PeerID must be
 * the authenticated one), then the TXT record {@code _acme-challenge.<peer id base36>.<domain>}
 * written into pebble-challtestsrv. Its mode makes it refuse, hang or publish a wrong value.
 */
final class BrokerDouble implements AutoCloseable {
  enum Mode { OK, REFUSE, HANG, WRONG_TXT }

  private static final ObjectMapper JSON = new ObjectMapper();
  private final HttpServer server;
  private final PeerIdAuthServer auth;
  private final String domain;
  private final URI challtestsrv;
  private final EventLoops loops = EventLoops.create(1, "broker-double");
  private final Host dialer;
  private final HttpClient http = HttpClient.newHttpClient();
  private final AtomicReference<Mode> mode = new AtomicReference<>(Mode.OK);
  private final CountDownLatch closing = new CountDownLatch(1);
  private final java.util.concurrent.ExecutorService executor = Executors.newFixedThreadPool(4);
  final List<String> accepted = new CopyOnWriteArrayList<>();
  final List<String> requests = new CopyOnWriteArrayList<>();

  BrokerDouble(final String domain, final URI challtestsrv) throws Exception {
    this.domain = domain;
    this.challtestsrv = challtestsrv;
    final SecureRandom random = new SecureRandom();
    auth = new PeerIdAuthServer(Keys.generate(KeyType.ED25519, random), Duration.ofHours(1),
        random, Clock.systemUTC());
    dialer = new Host(Keys.generate(KeyType.ED25519, random), HostConfig.builder()
        .agentVersion("broker-double").build(), loops, Clock.systemUTC());
    dialer.start().get(5, TimeUnit.SECONDS);
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.setExecutor(executor);
    server.createContext("/v1/_acme-challenge", this::handle);
    server.start();
  }

  URI url() {
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
  }

  void mode(final Mode value) {
    mode.set(value);
  }

  private void handle(final HttpExchange exchange) throws IOException {
    try (exchange) {
      final byte[] body = exchange.getRequestBody().readNBytes(64 * 1024);
      final PeerIdAuthServer.Outcome outcome = auth.handle(
          exchange.getRequestHeaders().getFirst("Host"),
          exchange.getRequestHeaders().getFirst("Authorization"));
      if (outcome instanceof PeerIdAuthServer.Challenge challenge) {
        exchange.getResponseHeaders().add("WWW-Authenticate", challenge.wwwAuthenticate());
        exchange.sendResponseHeaders(401, -1);
        return;
      }
      if (outcome instanceof PeerIdAuthServer.Rejected rejected) {
        exchange.getResponseHeaders().add("WWW-Authenticate", rejected.wwwAuthenticate());
        exchange.sendResponseHeaders(401, -1);
        return;
      }
      final PeerIdAuthServer.Authenticated ok = (PeerIdAuthServer.Authenticated) outcome;
      final Mode current = mode.get();
      requests.add(current.name());
      switch (current) {
        case REFUSE -> {
          reply(exchange, 403, "403 Forbidden: peer is denied (test)");
          return;
        }
        case HANG -> {
          try {
            closing.await(30, TimeUnit.SECONDS);
          } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          reply(exchange, 503, "too late");
          return;
        }
        default -> {
          // OK and WRONG_TXT go on
        }
      }
      final JsonNode json;
      try {
        json = JSON.readTree(body);
      } catch (final IOException e) {
        reply(exchange, 400, "error decoding body");
        return;
      }
      final String value = json.path("value").asText("");
      final byte[] digest;
      try {
        digest = PeerIdAuth.decode(value);
      } catch (final Exception e) {
        reply(exchange, 400, "value is not base64url");
        return;
      }
      if (digest.length != 32 || value.contains("=")) {
        reply(exchange, 400, "value is not a base64url of a SHA256 digest");
        return;
      }
      if (!dialBack(ok.peer(), json.path("addresses"))) {
        reply(exchange, 400, "error testing addresses: no address reached " + ok.peer());
        return;
      }
      final String txt = current == Mode.WRONG_TXT ? PeerIdAuth.encode(new byte[32])
          .replace("=", "") : value;
      final String zone = ok.peer().toBase36Cid() + "." + domain;
      // One value per peer, as p2p-forge stores it: replace, not add.
      http.send(HttpRequest.newBuilder(challtestsrv.resolve("/clear-txt")).POST(
          HttpRequest.BodyPublishers.ofString("{\"host\": \"_acme-challenge." + zone + ".\"}"))
          .build(), HttpResponse.BodyHandlers.ofString());
      final HttpResponse<String> set = http.send(HttpRequest.newBuilder(
          challtestsrv.resolve("/set-txt")).POST(HttpRequest.BodyPublishers.ofString(
              "{\"host\": \"_acme-challenge." + zone + ".\", \"value\": \"" + txt + "\"}"))
          .build(), HttpResponse.BodyHandlers.ofString());
      if (set.statusCode() != 200) {
        reply(exchange, 500, "challtestsrv answered " + set.statusCode());
        return;
      }
      accepted.add(value);
      if (ok.authenticationInfo() != null) {
        exchange.getResponseHeaders().add("Authentication-Info", ok.authenticationInfo());
      }
      exchange.sendResponseHeaders(200, -1);
    } catch (final InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Dials the addresses in turn until one reaches {@code peer}, as p2p-forge does. */
  private boolean dialBack(final PeerId peer, final JsonNode addresses) {
    for (final JsonNode address : addresses) {
      try {
        final Multiaddr target = Multiaddr.parse(address.asText()).withPeerId(peer);
        final Connection connection = dialer.dial(target).get(10, TimeUnit.SECONDS);
        final boolean right = connection.remotePeer().equals(peer);
        connection.close();
        if (right) {
          return true;
        }
      } catch (final Exception e) {
        // try the next one
      }
    }
    return false;
  }

  private static void reply(final HttpExchange exchange, final int status, final String text)
      throws IOException {
    final byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    exchange.sendResponseHeaders(status, bytes.length);
    exchange.getResponseBody().write(bytes);
  }

  @Override
  public void close() {
    closing.countDown();
    server.stop(0);
    executor.shutdownNow();
    dialer.close();
    loops.shutdownGracefully(Duration.ofSeconds(3));
  }
}
