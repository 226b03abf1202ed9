package io.relaypinner.handoff.guest;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.netty.util.NetUtil;
import io.relaypinner.libp2p.crypto.KeyFormatException;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * One validated guest configuration: the body of {@code POST /configure} (CONTRACT.md "Handoff
 * wire shapes", notes/handoff.md 2.3), or the same facts taken from a pull aggregate entry.
 * Only public deployment facts and public identifiers: the owner's private key has no field and
 * is refused by name. Of the two secrets today's executor sends, the relay identity is ignored
 * (the guest keeps its own) and the publisher key follows spec 2.9: used by a guest that has none
 * in use yet, ignored by one that has ({@link GuestStateDir#adoptPublisherKey}); both with a
 * warning.
 *
 * @param publicIpv4 {@code public_ipv4}: an IPv4 literal (loopback allowed)
 * @param publicIpv6 {@code public_ipv6}: an IPv6 literal
 * @param proxyHostname the hostname of {@code proxy_url} (a URL or a bare hostname), lower case
 * @param tcpPort {@code tcp_port}: the host port mapped to the relay's TCP port
 * @param wsPort {@code ws_port}: the host port mapped to the relay's WebSocket port
 * @param metricsPort {@code metrics_port}
 * @param metricsHttpsPort {@code metrics_https_port}
 * @param webrtcPort {@code webrtc_port}
 * @param quicPort {@code quic_port}
 * @param registrationId {@code bootstrap_registration_id}
 * @param ownerAddress {@code bootstrap_owner_address}: {@code 0x} + 40 hex
 * @param ownerAuthorizationB64 {@code bootstrap_owner_authorization_b64}: base64 of the signed
 *     authorization's JSON (checked when it is used)
 * @param noStart {@code no_start}: write the configuration but start nothing
 * @param publisherKey {@code bootstrap_publisher_private_key} (spec 2.9): used only by a guest
 *     that has no publisher key in use yet ({@link GuestStateDir#adoptPublisherKey}); never
 *     written to {@code relay.env}, never in {@link #publicFacts()} ({@link PublisherKey} prints
 *     only its address)
 * @param warnings what was accepted but ignored, for logs and the response
 */
public record ConfigureRequest(
    String publicIpv4,
    Optional<String> publicIpv6,
    Optional<String> proxyHostname,
    int tcpPort,
    int wsPort,
    OptionalInt metricsPort,
    OptionalInt metricsHttpsPort,
    OptionalInt webrtcPort,
    OptionalInt quicPort,
    Optional<String> registrationId,
    Optional<String> ownerAddress,
    Optional<String> ownerAuthorizationB64,
    boolean noStart,
    Optional<PublisherKey> publisherKey,
    List<String> warnings) {

  /** Largest accepted {@code POST /configure} body. */
  public static final int MAX_BODY_SIZE = 64 * 1024;
  /** Largest accepted owner authorization (base64 text). */
  public static final int MAX_AUTHORIZATION_LENGTH = 16 * 1024;
  private static final int MAX_TEXT_LENGTH = 512;

  private static final Set<String> OWNER_KEY_FIELDS = Set.of("bootstrap_owner_private_key",
      "owner_private_key", "bootstrapOwnerPrivateKey", "ownerPrivateKey");
  /** A secret the guest never takes: its relay identity is its own. */
  private static final String RELAY_IDENTITY_FIELD = "bootstrap_publisher_libp2p_identity_hex";
  private static final String PUBLISHER_KEY_FIELD = "bootstrap_publisher_private_key";
  private static final Set<String> FIELDS = Set.of("public_ipv4", "public_ipv6", "tcp_port",
      "ws_port", "proxy_url", "metrics_port", "metrics_https_port", "webrtc_port", "quic_port",
      "bootstrap_registration_id", "bootstrap_owner_address", "bootstrap_owner_authorization_b64",
      "no_start", "bootstrap_publisher_private_key", "bootstrap_publisher_libp2p_identity_hex");
  private static final Pattern ADDRESS = Pattern.compile("0x[0-9a-fA-F]{40}");
  private static final Pattern LABEL = Pattern.compile("[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?");

  private static final ObjectMapper MAPPER = new ObjectMapper(JsonFactory.builder()
      .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build());

  public ConfigureRequest {
    publicIpv6 = publicIpv6 == null ? Optional.empty() : publicIpv6;
    publisherKey = publisherKey == null ? Optional.empty() : publisherKey;
    warnings = List.copyOf(warnings);
  }

  /**
   * Parses and validates a {@code POST /configure} body (UTF-8 JSON object; empty = {@code {}}).
   *
   * @throws ConfigureRejectedException saying which field is wrong and why
   */
  public static ConfigureRequest parse(final byte[] body) throws ConfigureRejectedException {
    if (body.length > MAX_BODY_SIZE) {
      throw new ConfigureRejectedException("payload_too_large",
          "the body is larger than " + MAX_BODY_SIZE + " bytes");
    }
    final JsonNode root;
    try {
      root = body.length == 0 ? MAPPER.createObjectNode() : MAPPER.readTree(body);
    } catch (final JsonProcessingException e) {
      throw new ConfigureRejectedException("invalid_json",
          "the body is not valid JSON: " + e.getOriginalMessage());
    } catch (final IOException e) {
      throw new ConfigureRejectedException("invalid_json", "the body cannot be read as JSON");
    }
    if (root == null || !root.isObject()) {
      throw new ConfigureRejectedException("invalid_json", "the body must be a JSON object");
    }
    return fromObject((ObjectNode) root);
  }

  /**
   * Validates the fields of a JSON object.
   *
   * @throws ConfigureRejectedException saying which field is wrong and why
   */
  public static ConfigureRequest fromObject(final ObjectNode root)
      throws ConfigureRejectedException {
    final List<String> ownerKeys = new ArrayList<>();
    final List<String> unknown = new ArrayList<>();
    for (final Iterator<String> names = root.fieldNames(); names.hasNext(); ) {
      final String name = names.next();
      if (OWNER_KEY_FIELDS.contains(name)) {
        ownerKeys.add(name);
      } else if (!FIELDS.contains(name)) {
        unknown.add(name);
      }
    }
    if (!ownerKeys.isEmpty()) {
      throw new ConfigureRejectedException("owner_private_key_rejected", "field "
          + String.join(", ", ownerKeys) + " refused: the setup endpoint is unauthenticated "
          + "plain HTTP and never accepts the owner's private key; sign an owner authorization "
          + "with it and send bootstrap_owner_authorization_b64 instead. Nothing was written.");
    }
    if (!unknown.isEmpty()) {
      throw new ConfigureRejectedException("unknown_field", "unknown field"
          + (unknown.size() > 1 ? "s " : " ") + String.join(", ", unknown)
          + "; accepted fields: " + String.join(", ", FIELDS.stream().sorted().toList()));
    }
    final List<String> warnings = new ArrayList<>();
    if (root.has(RELAY_IDENTITY_FIELD) && !root.get(RELAY_IDENTITY_FIELD).isNull()) {
      warnings.add(RELAY_IDENTITY_FIELD + " is a secret sent over plain HTTP; it was ignored: "
          + "the guest keeps the relay identity it generated (see peer_id in /metadata)");
    }
    final Optional<PublisherKey> publisherKey = publisherKey(root);
    final String ipv4 = requiredText(root, "public_ipv4");
    if (!NetUtil.isValidIpV4Address(ipv4)) {
      throw new ConfigureRejectedException("invalid_field", "public_ipv4 must be an IPv4 "
          + "address such as 203.0.113.8" + (ipv4.indexOf(':') >= 0
              ? " (an IPv6 address goes in public_ipv6)" : "") + "; got \"" + clip(ipv4) + "\"");
    }
    final Optional<String> ipv6 = optionalText(root, "public_ipv6");
    if (ipv6.isPresent() && (!NetUtil.isValidIpV6Address(ipv6.get())
        || ipv6.get().indexOf('[') >= 0 || ipv6.get().indexOf('%') >= 0)) {
      throw new ConfigureRejectedException("invalid_field",
          "public_ipv6 must be an IPv6 address; got \"" + clip(ipv6.get()) + "\"");
    }
    final Optional<String> proxy = optionalText(root, "proxy_url").map(String::strip)
        .filter(s -> !s.isEmpty());
    final Optional<String> proxyHost = proxy.isPresent()
        ? Optional.of(proxyHostname(proxy.get())) : Optional.empty();
    final int tcp = requiredPort(root, "tcp_port");
    final int ws = requiredPort(root, "ws_port");
    final Optional<String> owner = optionalText(root, "bootstrap_owner_address");
    if (owner.isPresent() && !ADDRESS.matcher(owner.get()).matches()) {
      throw new ConfigureRejectedException("invalid_field", "bootstrap_owner_address must be an "
          + "Ethereum address (0x + 40 hex digits); got \"" + clip(owner.get()) + "\"");
    }
    final Optional<String> authorization =
        optionalText(root, "bootstrap_owner_authorization_b64").filter(s -> !s.isBlank());
    if (authorization.isPresent()) {
      checkAuthorization(authorization.get());
    }
    final Optional<String> registration = optionalText(root, "bootstrap_registration_id")
        .filter(s -> !s.isBlank());
    if (registration.isPresent() && (registration.get().length() > MAX_TEXT_LENGTH
        || !registration.get().chars().allMatch(c -> c > 0x20 && c < 0x7f))) {
      throw new ConfigureRejectedException("invalid_field", "bootstrap_registration_id must be "
          + "printable ASCII without spaces, at most " + MAX_TEXT_LENGTH + " characters");
    }
    final JsonNode noStart = root.get("no_start");
    if (noStart != null && !noStart.isNull() && !noStart.isBoolean()) {
      throw new ConfigureRejectedException("invalid_field",
          "no_start must be true or false; got " + clip(noStart.toString()));
    }
    return new ConfigureRequest(ipv4, ipv6, proxyHost, tcp, ws,
        optionalPort(root, "metrics_port"), optionalPort(root, "metrics_https_port"),
        optionalPort(root, "webrtc_port"), optionalPort(root, "quic_port"), registration, owner,
        authorization, noStart != null && noStart.asBoolean(false), publisherKey, warnings);
  }

  /** {@code bootstrap_publisher_private_key}: {@code 0x} + 64 hex digits, a valid key. */
  private static Optional<PublisherKey> publisherKey(final ObjectNode root)
      throws ConfigureRejectedException {
    final JsonNode node = root.get(PUBLISHER_KEY_FIELD);
    if (node == null || node.isNull() || node.isTextual() && node.asText().isBlank()) {
      return Optional.empty();
    }
    try {
      if (!node.isTextual()) {
        throw new KeyFormatException("not a string");
      }
      return Optional.of(PublisherKey.fromHex(node.asText()));
    } catch (final KeyFormatException e) {
      // Never echo the value: it is meant to be a secret.
      throw new ConfigureRejectedException("invalid_field", PUBLISHER_KEY_FIELD + " must be a "
          + "secp256k1 private key as 0x + 64 hex digits (value not shown)");
    }
  }

  /** The hostname of a URL ({@code https://x.example/…}) or of a bare hostname, lower case. */
  static String proxyHostname(final String value) throws ConfigureRejectedException {
    String host = value;
    if (value.contains("://")) {
      try {
        host = new URI(value).getHost();
      } catch (final URISyntaxException e) {
        host = null;
      }
    }
    if (host == null || !isHostname(host.toLowerCase(Locale.ROOT))) {
      throw new ConfigureRejectedException("invalid_field", "proxy_url must be a URL or a bare "
          + "hostname with a valid DNS hostname; got \"" + clip(value) + "\"");
    }
    return host.toLowerCase(Locale.ROOT);
  }

  private static boolean isHostname(final String host) {
    if (host.isEmpty() || host.length() > 253 || NetUtil.isValidIpV4Address(host)) {
      return false;
    }
    for (final String label : host.split("\\.", -1)) {
      if (!LABEL.matcher(label).matches()) {
        return false;
      }
    }
    return true;
  }

  /** Shape only: base64 of a JSON object with a payload and a signature (verified when used). */
  private static void checkAuthorization(final String b64) throws ConfigureRejectedException {
    if (b64.length() > MAX_AUTHORIZATION_LENGTH) {
      throw new ConfigureRejectedException("invalid_field", "bootstrap_owner_authorization_b64 "
          + "is longer than " + MAX_AUTHORIZATION_LENGTH + " characters");
    }
    try {
      final JsonNode decoded = MAPPER.readTree(Base64.getDecoder().decode(b64.strip()));
      if (decoded == null || !decoded.path("payload").isObject()
          || !decoded.path("signature").isTextual()) {
        throw new ConfigureRejectedException("invalid_field", "bootstrap_owner_authorization_b64 "
            + "must be base64 of a JSON object with \"payload\" and \"signature\"");
      }
    } catch (final IllegalArgumentException | IOException e) {
      throw new ConfigureRejectedException("invalid_field", "bootstrap_owner_authorization_b64 "
          + "is not base64 of JSON: " + e.getMessage());
    }
  }

  private static String requiredText(final ObjectNode root, final String field)
      throws ConfigureRejectedException {
    return optionalText(root, field).orElseThrow(() -> new ConfigureRejectedException(
        "missing_field", field + " is required"));
  }

  private static Optional<String> optionalText(final ObjectNode root, final String field)
      throws ConfigureRejectedException {
    final JsonNode node = root.get(field);
    if (node == null || node.isNull()) {
      return Optional.empty();
    }
    if (!node.isTextual()) {
      throw new ConfigureRejectedException("invalid_field",
          field + " must be a string; got " + clip(node.toString()));
    }
    if (node.asText().length() > MAX_AUTHORIZATION_LENGTH) {
      throw new ConfigureRejectedException("invalid_field", field + " is too long");
    }
    return Optional.of(node.asText());
  }

  private static int requiredPort(final ObjectNode root, final String field)
      throws ConfigureRejectedException {
    final OptionalInt port = optionalPort(root, field);
    if (port.isEmpty()) {
      throw new ConfigureRejectedException("missing_field", field
          + " is required: the host port mapped to the relay's "
          + ("tcp_port".equals(field) ? "TCP" : "WebSocket") + " port");
    }
    return port.getAsInt();
  }

  /** A JSON integer 1-65535; booleans, strings, fractions and out-of-range numbers are refused. */
  private static OptionalInt optionalPort(final ObjectNode root, final String field)
      throws ConfigureRejectedException {
    final JsonNode node = root.get(field);
    if (node == null || node.isNull()) {
      return OptionalInt.empty();
    }
    if (!node.isIntegralNumber() || !node.canConvertToInt() || node.intValue() < 1
        || node.intValue() > 65535) {
      throw new ConfigureRejectedException("invalid_field", field
          + " must be an integer TCP/UDP port between 1 and 65535; got " + clip(node.toString()));
    }
    return OptionalInt.of(node.intValue());
  }

  private static String clip(final String text) {
    return text.length() <= 80 ? text : text.substring(0, 80) + "…";
  }

  /**
   * The {@code relay.env} lines for this configuration: the deployment facts the relay reads
   * (CONTRACT.md environment variables) and the guest's own {@code ALEPH_BOOTSTRAP_*} values.
   */
  public Map<String, String> toEnvironment(final Path dataDir) {
    final Map<String, String> env = new LinkedHashMap<>();
    env.put("DATASTORE_PATH", dataDir.toString());
    env.put("PUBLIC_IPV4", publicIpv4);
    publicIpv6.ifPresent(v -> env.put("PUBLIC_IPV6", v));
    proxyHostname.ifPresent(v -> env.put("PROXY_HOSTNAME", v));
    env.put("EXTERNAL_RELAY_TCP_PORT", Integer.toString(tcpPort));
    env.put("EXTERNAL_RELAY_WS_PORT", Integer.toString(wsPort));
    metricsPort.ifPresent(v -> env.put("EXTERNAL_METRICS_PORT", Integer.toString(v)));
    metricsHttpsPort.ifPresent(v -> env.put("EXTERNAL_METRICS_HTTPS_PORT", Integer.toString(v)));
    webrtcPort.ifPresent(v -> env.put("EXTERNAL_RELAY_WEBRTC_PORT", Integer.toString(v)));
    quicPort.ifPresent(v -> env.put("EXTERNAL_RELAY_QUIC_PORT", Integer.toString(v)));
    registrationId.ifPresent(v -> env.put("ALEPH_BOOTSTRAP_REGISTRATION_ID", v));
    ownerAddress.ifPresent(v -> env.put("ALEPH_BOOTSTRAP_OWNER_ADDRESS", v));
    ownerAuthorizationB64.ifPresent(v -> env.put("ALEPH_BOOTSTRAP_OWNER_AUTHORIZATION_B64", v));
    return env;
  }

  /**
   * The configuration written earlier to {@code relay.env} (a guest restarted after it was
   * configured).
   *
   * @throws ConfigureRejectedException when the file no longer holds a valid configuration
   */
  public static ConfigureRequest fromEnvironment(final Map<String, String> env)
      throws ConfigureRejectedException {
    final ObjectNode node = MAPPER.createObjectNode();
    putText(node, "public_ipv4", env.get("PUBLIC_IPV4"));
    putText(node, "public_ipv6", env.get("PUBLIC_IPV6"));
    putText(node, "proxy_url", env.get("PROXY_HOSTNAME"));
    putPort(node, "tcp_port", env.get("EXTERNAL_RELAY_TCP_PORT"));
    putPort(node, "ws_port", env.get("EXTERNAL_RELAY_WS_PORT"));
    putPort(node, "metrics_port", env.get("EXTERNAL_METRICS_PORT"));
    putPort(node, "metrics_https_port", env.get("EXTERNAL_METRICS_HTTPS_PORT"));
    putPort(node, "webrtc_port", env.get("EXTERNAL_RELAY_WEBRTC_PORT"));
    putPort(node, "quic_port", env.get("EXTERNAL_RELAY_QUIC_PORT"));
    putText(node, "bootstrap_registration_id", env.get("ALEPH_BOOTSTRAP_REGISTRATION_ID"));
    putText(node, "bootstrap_owner_address", env.get("ALEPH_BOOTSTRAP_OWNER_ADDRESS"));
    putText(node, "bootstrap_owner_authorization_b64",
        env.get("ALEPH_BOOTSTRAP_OWNER_AUTHORIZATION_B64"));
    return fromObject(node);
  }

  private static void putText(final ObjectNode node, final String field, final String value) {
    if (value != null && !value.isBlank()) {
      node.put(field, value.strip());
    }
  }

  private static void putPort(final ObjectNode node, final String field, final String value) {
    if (value != null && !value.isBlank()) {
      try {
        node.put(field, Integer.parseInt(value.strip()));
      } catch (final NumberFormatException e) {
        node.put(field, value);
      }
    }
  }

  /** The same configuration without the supplied publisher key (once it was used or ignored). */
  public ConfigureRequest withoutPublisherKey() {
    return new ConfigureRequest(publicIpv4, publicIpv6, proxyHostname, tcpPort, wsPort,
        metricsPort, metricsHttpsPort, webrtcPort, quicPort, registrationId, ownerAddress,
        ownerAuthorizationB64, noStart, Optional.empty(), warnings);
  }

  /** The same configuration with another owner authorization (a later one the owner signed). */
  public ConfigureRequest withOwnerAuthorization(final String b64, final String owner) {
    return new ConfigureRequest(publicIpv4, publicIpv6, proxyHostname, tcpPort, wsPort,
        metricsPort, metricsHttpsPort, webrtcPort, quicPort, registrationId,
        Optional.ofNullable(owner).or(() -> ownerAddress), Optional.of(b64), noStart,
        publisherKey, warnings);
  }

  /** The public facts as JSON-ready values (for {@code /metadata}), never a secret. */
  public Map<String, Object> publicFacts() {
    final Map<String, Object> facts = new LinkedHashMap<>();
    facts.put("public_ipv4", publicIpv4);
    facts.put("public_ipv6", publicIpv6.orElse(null));
    facts.put("proxy_hostname", proxyHostname.orElse(null));
    facts.put("tcp_port", tcpPort);
    facts.put("ws_port", wsPort);
    facts.put("metrics_port", metricsPort.isPresent() ? metricsPort.getAsInt() : null);
    facts.put("metrics_https_port",
        metricsHttpsPort.isPresent() ? metricsHttpsPort.getAsInt() : null);
    facts.put("webrtc_port", webrtcPort.isPresent() ? webrtcPort.getAsInt() : null);
    facts.put("quic_port", quicPort.isPresent() ? quicPort.getAsInt() : null);
    facts.put("bootstrap_registration_id", registrationId.orElse(null));
    facts.put("bootstrap_owner_address", ownerAddress.orElse(null));
    facts.put("bootstrap_owner_authorization", ownerAuthorizationB64.isPresent());
    return facts;
  }
}
