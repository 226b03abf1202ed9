package io.relaypinner.libp2p.http;

import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.libp2p.crypto.PublicKey;
import io.relaypinner.multiformats.PeerId;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The client side of libp2p/specs http/peer-id-auth.md r1 over the JDK {@link HttpClient}: sends
 * a request authenticated with the node's PeerID and authenticates the server's PeerID.
 *
 * <p>It opens with the client-initiated handshake (the server proves its key before any request
 * body is sent) and follows a server that answers with the server-initiated one instead; the
 * {@code bearer} token a server hands out is reused for later requests to the same host until it
 * expires or the server answers 401. The {@code hostname} signed is the request's authority
 * ({@code host} or {@code host:port} when the port is not the scheme's default), what the server
 * sees as {@code Host}. Response bodies are read up to {@code maxBodyBytes}.
 */
public final class PeerIdAuthClient {
  public static final String AUTHORIZATION = "Authorization";
  public static final String WWW_AUTHENTICATE = "WWW-Authenticate";
  public static final String AUTHENTICATION_INFO = "Authentication-Info";
  /** Bearer tokens kept (one per host). */
  private static final int MAX_TOKENS = 16;
  /** A token without {@code expires} is used for this long. */
  private static final Duration DEFAULT_TOKEN_LIFETIME = Duration.ofMinutes(30);

  /**
   * One answer.
   *
   * @param status the HTTP status of the final request
   * @param body at most {@code maxBodyBytes} of its body
   * @param headers its headers
   * @param server the server's PeerID once it proved it (empty when the server asked for no
   *     authentication and answered, e.g. with 429 or 503, before the handshake)
   */
  public record Response(int status, byte[] body, HttpHeaders headers, Optional<PeerId> server) {}

  private record Token(String bearer, PeerId server, Instant expires) {}

  private final PrivateKey key;
  private final String publicKeyB64;
  private final HttpClient http;
  private final SecureRandom random;
  private final Clock clock;
  private final int maxBodyBytes;
  private final Map<String, Token> tokens = new ConcurrentHashMap<>();

  public PeerIdAuthClient(final PrivateKey key, final HttpClient http, final SecureRandom random,
      final Clock clock, final int maxBodyBytes) {
    this.key = Objects.requireNonNull(key, "key");
    this.publicKeyB64 = PeerIdAuth.encode(key.publicKey().marshal());
    this.http = Objects.requireNonNull(http, "http");
    this.random = Objects.requireNonNull(random, "random");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.maxBodyBytes = maxBodyBytes;
  }

  /**
   * Sends {@code method uri} with {@code body} (may be empty) and {@code headers}, authenticating
   * both sides. Each HTTP exchange has {@code timeout}.
   *
   * @throws PeerIdAuthException when the server's proof is missing or wrong, or its headers are
   *     malformed
   */
  public Response send(final String method, final URI uri, final Map<String, String> headers,
      final byte[] body, final Duration timeout)
      throws IOException, InterruptedException, PeerIdAuthException {
    final String hostname = hostname(uri);
    final Token token = tokens.get(hostname);
    if (token != null) {
      if (token.expires().isAfter(clock.instant())) {
        final HttpResponse<InputStream> answer = exchange(method, uri, headers, body, timeout,
            AuthParams.of(Map.of("bearer", token.bearer())).format());
        if (answer.statusCode() != 401) {
          return response(answer, Optional.of(token.server()));
        }
        drain(answer);
      }
      tokens.remove(hostname);
    }
    final String challengeServer = PeerIdAuth.newChallenge(random);
    final Map<String, String> opening = new LinkedHashMap<>();
    opening.put("challenge-server", challengeServer);
    opening.put("public-key", publicKeyB64);
    final HttpResponse<InputStream> first = exchange(method, uri, headers, new byte[0], timeout,
        AuthParams.of(opening).format());
    final Optional<AuthParams> offered = first.statusCode() == 401
        ? AuthParams.parse(first.headers().firstValue(WWW_AUTHENTICATE).orElse(null))
        : Optional.empty();
    if (offered.isEmpty()) {
      return response(first, Optional.empty());
    }
    drain(first);
    final AuthParams www = offered.get();
    final String challengeClient = require(www, "challenge-client");
    final String opaque = require(www, "opaque");
    final Optional<String> serverSig = www.get("sig");
    final boolean serverFirst = serverSig.isPresent();
    // A server-initiated 401 may leave its key out (go-libp2p does): it comes with the answer.
    final Optional<PublicKey> offeredKey = serverFirst || www.get("public-key").isPresent()
        ? Optional.of(PeerIdAuth.publicKey(require(www, "public-key"))) : Optional.empty();
    final Map<String, Object> clientSigned = new LinkedHashMap<>();
    clientSigned.put("challenge-client", challengeClient);
    clientSigned.put("hostname", hostname);
    offeredKey.ifPresent(k -> clientSigned.put("server-public-key", k.marshal()));
    final Map<String, String> reply = new LinkedHashMap<>();
    if (serverFirst) {
      // Client-initiated: the server proved its key already; check before sending the body.
      verifyServer(offeredKey.get(), serverSig.get(), challengeServer, hostname);
    } else {
      // The server ignored our opening and started the server-initiated handshake.
      reply.put("public-key", publicKeyB64);
    }
    reply.put("opaque", opaque);
    final String secondChallenge = serverFirst ? null : PeerIdAuth.newChallenge(random);
    if (!serverFirst) {
      reply.put("challenge-server", secondChallenge);
    }
    reply.put("sig", PeerIdAuth.sign(key, clientSigned));
    final HttpResponse<InputStream> answer = exchange(method, uri, headers, body, timeout,
        AuthParams.of(reply).format());
    final Optional<AuthParams> info = AuthParams.parse(
        answer.headers().firstValue(AUTHENTICATION_INFO).orElse(null));
    final PublicKey serverKey;
    if (serverFirst) {
      serverKey = offeredKey.get();
    } else {
      final String sig = info.flatMap(i -> i.get("sig")).orElse(null);
      final String keyB64 = info.flatMap(i -> i.get("public-key"))
          .or(() -> www.get("public-key")).orElse(null);
      if (sig == null || keyB64 == null) {
        drain(answer);
        throw new PeerIdAuthException("server sent no Authentication-Info sig and key (status "
            + answer.statusCode() + ")");
      }
      serverKey = PeerIdAuth.publicKey(keyB64);
      if (offeredKey.isPresent() && !offeredKey.get().equals(serverKey)) {
        drain(answer);
        throw new PeerIdAuthException("server changed its key during the handshake");
      }
      verifyServer(serverKey, sig, secondChallenge, hostname);
    }
    final PeerId server = serverKey.peerId();
    info.flatMap(i -> i.get("bearer")).ifPresent(bearer -> remember(hostname,
        new Token(bearer, server, expiry(info.get()))));
    return response(answer, Optional.of(server));
  }

  private void verifyServer(final PublicKey serverKey, final String sig,
      final String challengeServer, final String hostname) throws PeerIdAuthException {
    if (!PeerIdAuth.verify(serverKey, sig, Map.of("challenge-server", challengeServer,
        "client-public-key", key.publicKey().marshal(), "hostname", hostname))) {
      throw new PeerIdAuthException("the server's signature does not verify");
    }
  }

  private Instant expiry(final AuthParams info) {
    final Instant fallback = clock.instant().plus(DEFAULT_TOKEN_LIFETIME);
    try {
      return info.get("expires").map(Instant::parse).filter(e -> e.isBefore(fallback))
          .orElse(fallback);
    } catch (final java.time.format.DateTimeParseException e) {
      return fallback;
    }
  }

  private void remember(final String hostname, final Token token) {
    if (tokens.size() >= MAX_TOKENS && !tokens.containsKey(hostname)) {
      tokens.clear();
    }
    tokens.put(hostname, token);
  }

  private static String require(final AuthParams params, final String name)
      throws PeerIdAuthException {
    return params.get(name).orElseThrow(
        () -> new PeerIdAuthException("WWW-Authenticate has no " + name));
  }

  private HttpResponse<InputStream> exchange(final String method, final URI uri,
      final Map<String, String> headers, final byte[] body, final Duration timeout,
      final String authorization) throws IOException, InterruptedException {
    final HttpRequest.Builder request = HttpRequest.newBuilder(uri).timeout(timeout)
        .method(method, body.length == 0 ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofByteArray(body));
    headers.forEach(request::header);
    request.header(AUTHORIZATION, authorization);
    return http.send(request.build(), HttpResponse.BodyHandlers.ofInputStream());
  }

  private Response response(final HttpResponse<InputStream> answer,
      final Optional<PeerId> server) throws IOException {
    try (InputStream in = answer.body()) {
      return new Response(answer.statusCode(), in.readNBytes(maxBodyBytes), answer.headers(),
          server);
    }
  }

  private static void drain(final HttpResponse<InputStream> answer) throws IOException {
    answer.body().close();
  }

  /** The authority as sent in {@code Host}: lower-case host, and the port unless default. */
  public static String hostname(final URI uri) {
    final String host = Objects.requireNonNull(uri.getHost(), "uri host").toLowerCase(Locale.ROOT);
    final int port = uri.getPort();
    final boolean defaultPort = port < 0 || ("https".equalsIgnoreCase(uri.getScheme())
        && port == 443) || ("http".equalsIgnoreCase(uri.getScheme()) && port == 80);
    return defaultPort ? host : host + ":" + port;
  }
}
