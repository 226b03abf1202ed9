package io.relaypinner.libp2p.http;

import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.libp2p.crypto.PublicKey;
import io.relaypinner.multiformats.PeerId;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The server side of libp2p/specs http/peer-id-auth.md r1, without HTTP types: given the
 * {@code hostname} the request was sent to and its {@code Authorization} header, says whether the
 * client is authenticated (and what {@code Authentication-Info} to send) or which
 * {@code WWW-Authenticate} challenge to answer with 401. Both handshakes and bearer tokens.
 *
 * <p>Stateless: what the server must remember between the two requests of a handshake travels in
 * the {@code opaque} value and bearer tokens, sealed with HMAC-SHA256 under a key of this server
 * and dated; cheap checks (sizes, the seal, its age and host name) come before signatures.
 */
public final class PeerIdAuthServer {
  /** What to answer. */
  public sealed interface Outcome {}

  /** The client proved {@code peer}; serve the request and send {@code authenticationInfo}. */
  public record Authenticated(PeerId peer, String authenticationInfo) implements Outcome {}

  /** Answer 401 with this {@code WWW-Authenticate}. */
  public record Challenge(String wwwAuthenticate) implements Outcome {}

  /** Answer 401 (bad signature, stale or forged opaque/bearer, malformed header). */
  public record Rejected(String reason, String wwwAuthenticate) implements Outcome {}

  /** How long a handshake's opaque value is honoured. */
  public static final Duration HANDSHAKE_TTL = Duration.ofMinutes(1);
  private static final int MAC_BYTES = 32;

  private final PrivateKey key;
  private final String publicKeyB64;
  private final byte[] macKey;
  private final Duration tokenTtl;
  private final SecureRandom random;
  private final Clock clock;

  public PeerIdAuthServer(final PrivateKey key, final Duration tokenTtl,
      final SecureRandom random, final Clock clock) {
    this.key = Objects.requireNonNull(key, "key");
    this.publicKeyB64 = PeerIdAuth.encode(key.publicKey().marshal());
    this.macKey = new byte[32];
    random.nextBytes(macKey);
    this.tokenTtl = Objects.requireNonNull(tokenTtl, "tokenTtl");
    this.random = random;
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  public PeerId peerId() {
    return key.publicKey().peerId();
  }

  /** Decides about one request to {@code hostname} (its {@code Host}) with this header. */
  public Outcome handle(final String hostname, final String authorization) {
    final Optional<AuthParams> parsed;
    try {
      parsed = AuthParams.parse(authorization);
    } catch (final PeerIdAuthException e) {
      return new Rejected(e.getMessage(), serverInitiated(hostname));
    }
    if (parsed.isEmpty()) {
      return new Challenge(serverInitiated(hostname));
    }
    final AuthParams params = parsed.get();
    try {
      if (params.get("bearer").isPresent()) {
        final String[] token = unseal(params.get("bearer").get(), "bearer", hostname, tokenTtl);
        return new Authenticated(PeerId.parse(token[3]), null);
      }
      if (params.get("opaque").isEmpty()) {
        return clientInitiated(hostname, params);
      }
      return finish(hostname, params);
    } catch (final PeerIdAuthException | IllegalArgumentException e) {
      return new Rejected(e.getMessage(), serverInitiated(hostname));
    }
  }

  /** The 401 of a server-initiated handshake. */
  private String serverInitiated(final String hostname) {
    final String challengeClient = PeerIdAuth.newChallenge(random);
    final Map<String, String> out = new LinkedHashMap<>();
    out.put("challenge-client", challengeClient);
    out.put("public-key", publicKeyB64);
    out.put("opaque", seal("opaque", hostname, challengeClient, ""));
    return AuthParams.of(out).format();
  }

  /** Step 2 of the client-initiated handshake: prove our key, challenge theirs. */
  private Outcome clientInitiated(final String hostname, final AuthParams params)
      throws PeerIdAuthException {
    final String challengeServer = require(params, "challenge-server");
    final String clientKeyB64 = require(params, "public-key");
    final PublicKey clientKey = PeerIdAuth.publicKey(clientKeyB64);
    final String challengeClient = PeerIdAuth.newChallenge(random);
    final Map<String, String> out = new LinkedHashMap<>();
    out.put("challenge-client", challengeClient);
    out.put("public-key", publicKeyB64);
    out.put("sig", PeerIdAuth.sign(key, Map.of("challenge-server", challengeServer,
        "client-public-key", clientKey.marshal(), "hostname", hostname)));
    out.put("opaque", seal("opaque", hostname, challengeClient, clientKeyB64));
    return new Challenge(AuthParams.of(out).format());
  }

  /** The client's signature over our challenge, in either handshake. */
  private Outcome finish(final String hostname, final AuthParams params)
      throws PeerIdAuthException {
    final String sig = require(params, "sig");
    final String[] opaque = unseal(params.get("opaque").get(), "opaque", hostname,
        HANDSHAKE_TTL);
    final String challengeClient = opaque[3];
    final String clientKeyB64 = !opaque[4].isEmpty() ? opaque[4] : require(params, "public-key");
    final PublicKey clientKey = PeerIdAuth.publicKey(clientKeyB64);
    if (!PeerIdAuth.verify(clientKey, sig, Map.of("challenge-client", challengeClient,
        "server-public-key", key.publicKey().marshal(), "hostname", hostname))) {
      throw new PeerIdAuthException("client signature does not verify");
    }
    final PeerId peer = clientKey.peerId();
    final Map<String, String> info = new LinkedHashMap<>();
    final Optional<String> challengeServer = params.get("challenge-server");
    if (challengeServer.isPresent() && opaque[4].isEmpty()) {
      info.put("sig", PeerIdAuth.sign(key, Map.of("challenge-server", challengeServer.get(),
          "client-public-key", clientKey.marshal(), "hostname", hostname)));
    }
    info.put("bearer", seal("bearer", hostname, peer.toBase58(), ""));
    info.put("expires", clock.instant().plus(tokenTtl).toString());
    return new Authenticated(peer, AuthParams.of(info).format());
  }

  private static String require(final AuthParams params, final String name)
      throws PeerIdAuthException {
    return params.get(name).orElseThrow(() -> new PeerIdAuthException("missing " + name));
  }

  /** base64url(HMAC || "kind\nhostname\ncreated\na\nb"). */
  private String seal(final String kind, final String hostname, final String a, final String b) {
    final byte[] payload = String.join("\n", kind, hostname,
        Long.toString(clock.instant().getEpochSecond()), a, b).getBytes(StandardCharsets.UTF_8);
    final byte[] mac = mac(payload);
    final byte[] out = Arrays.copyOf(mac, mac.length + payload.length);
    System.arraycopy(payload, 0, out, mac.length, payload.length);
    return PeerIdAuth.encode(out);
  }

  private String[] unseal(final String sealed, final String kind, final String hostname,
      final Duration ttl) throws PeerIdAuthException {
    final byte[] raw = PeerIdAuth.decode(sealed);
    if (raw.length <= MAC_BYTES) {
      throw new PeerIdAuthException(kind + " too short");
    }
    final byte[] payload = Arrays.copyOfRange(raw, MAC_BYTES, raw.length);
    if (!MessageDigest.isEqual(Arrays.copyOf(raw, MAC_BYTES), mac(payload))) {
      throw new PeerIdAuthException(kind + " not issued by this server");
    }
    final String[] fields = new String(payload, StandardCharsets.UTF_8).split("\n", -1);
    if (fields.length != 5 || !fields[0].equals(kind) || !fields[1].equals(hostname)) {
      throw new PeerIdAuthException(kind + " issued for another host");
    }
    final Instant created = Instant.ofEpochSecond(Long.parseLong(fields[2]));
    if (created.plus(ttl).isBefore(clock.instant())) {
      throw new PeerIdAuthException(kind + " expired");
    }
    return fields;
  }

  private byte[] mac(final byte[] payload) {
    try {
      final Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(macKey, "HmacSHA256"));
      return mac.doFinal(payload);
    } catch (final GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is part of every JDK", e);
    }
  }
}
