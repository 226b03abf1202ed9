package io.relaypinner.relay.autotls;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.relaypinner.libp2p.http.PeerIdAuthClient;
import io.relaypinner.libp2p.http.PeerIdAuthException;
import io.relaypinner.multiformats.Multiaddr;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The AutoTLS broker's registration API (p2p-forge, libp2p/specs tls/autotls-client.md): {@code
 * POST <broker>/v1/_acme-challenge} with {@code {"value": <dns-01 TXT value>, "addresses":
 * [<multiaddr>...]}}, authenticated with the node's PeerID (http/peer-id-auth.md). The broker
 * dials the addresses back, checks the PeerID and publishes the TXT record
 * {@code _acme-challenge.<peer id base36>.<domain>}.
 */
public final class BrokerClient {
  public static final String PATH = "/v1/_acme-challenge";
  /** Error bodies are logged up to this many bytes. */
  static final int MAX_BODY = 4096;
  private static final int MAX_LOGGED = 200;

  private final PeerIdAuthClient http;
  private final URI endpoint;
  private final String userAgent;
  private final Duration timeout;
  private final ObjectMapper json = new ObjectMapper();

  public BrokerClient(final PeerIdAuthClient http, final URI brokerUrl, final String userAgent,
      final Duration timeout) {
    this.http = Objects.requireNonNull(http, "http");
    final String base = brokerUrl.toString();
    this.endpoint = URI.create((base.endsWith("/") ? base.substring(0, base.length() - 1) : base)
        + PATH);
    this.userAgent = Objects.requireNonNull(userAgent, "userAgent");
    this.timeout = Objects.requireNonNull(timeout, "timeout");
  }

  public URI endpoint() {
    return endpoint;
  }

  /**
   * Asks the broker to publish {@code txtValue}.
   *
   * @throws AutoTlsFailure with the broker reason when it refuses, fails or times out
   */
  public void publish(final String txtValue, final List<Multiaddr> addresses)
      throws AutoTlsFailure, InterruptedException {
    final ObjectNode body = json.createObjectNode();
    body.put("value", txtValue);
    addresses.forEach(a -> body.withArray("addresses").add(a.toString()));
    final PeerIdAuthClient.Response response;
    try {
      response = http.send("POST", endpoint, Map.of("Content-Type", "application/json",
          "User-Agent", userAgent), json.writeValueAsBytes(body), timeout);
    } catch (final HttpTimeoutException e) {
      throw new AutoTlsFailure(FailureReason.BROKER_TIMEOUT, "broker " + endpoint
          + " did not answer within " + timeout.toMillis() + " ms");
    } catch (final PeerIdAuthException e) {
      throw new AutoTlsFailure(FailureReason.BROKER_AUTH, "broker " + endpoint
          + ": PeerID authentication failed (" + e.getMessage() + ")");
    } catch (final IOException e) {
      throw new AutoTlsFailure(FailureReason.BROKER_UNAVAILABLE, "broker " + endpoint
          + " unreachable: " + e);
    }
    final int status = response.status();
    if (status >= 200 && status < 300) {
      return;
    }
    final String text = new String(response.body(), StandardCharsets.UTF_8).strip();
    final String detail = "broker " + endpoint + " answered " + status
        + (text.isEmpty() ? "" : ": " + sanitize(text));
    final Optional<Duration> retryAfter = response.headers().firstValue("Retry-After")
        .flatMap(BrokerClient::retryAfter);
    if (status == 429) {
      throw new AutoTlsFailure(FailureReason.BROKER_RATE_LIMITED, detail, retryAfter);
    }
    if (status >= 400 && status < 500) {
      throw new AutoTlsFailure(FailureReason.BROKER_REFUSED, detail, retryAfter);
    }
    throw new AutoTlsFailure(FailureReason.BROKER_UNAVAILABLE, detail, retryAfter);
  }

  /** Delta seconds only (an HTTP date is rare from this API and then ignored). */
  static Optional<Duration> retryAfter(final String value) {
    final String v = value.strip();
    if (v.isEmpty() || v.length() > 9 || !v.chars().allMatch(Character::isDigit)) {
      return Optional.empty();
    }
    return Optional.of(Duration.ofSeconds(Long.parseLong(v)));
  }

  /** One line of printable ASCII, bounded: the body is the remote's text. */
  static String sanitize(final String text) {
    final StringBuilder out = new StringBuilder();
    for (int i = 0; i < text.length() && out.length() < MAX_LOGGED; i++) {
      final char c = text.charAt(i);
      out.append(c >= 0x20 && c < 0x7f ? c : ' ');
    }
    return out.toString();
  }
}
