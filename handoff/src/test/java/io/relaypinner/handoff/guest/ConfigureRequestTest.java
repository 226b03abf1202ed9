package io.relaypinner.handoff.guest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ConfigureRequestTest {
  private static final String VALID = "\"public_ipv4\":\"203.0.113.8\",\"tcp_port\":29091,"
      + "\"ws_port\":29092";

  private static ConfigureRequest parse(final String json) throws ConfigureRejectedException {
    return ConfigureRequest.parse(json.getBytes(StandardCharsets.UTF_8));
  }

  private static void assertRejected(final String json, final String code, final String text) {
    assertThatThrownBy(() -> parse(json)).isInstanceOf(ConfigureRejectedException.class)
        .hasMessageContaining(text)
        .satisfies(e -> assertThat(((ConfigureRejectedException) e).code()).isEqualTo(code));
  }

  @Test
  void parse_shouldKeepEveryField_whenTheExecutorExampleIsSent() throws Exception {
    final ConfigureRequest request = parse("{\"public_ipv4\":\"203.0.113.8\","
        + "\"public_ipv6\":\"2001:db8::8\",\"tcp_port\":29091,\"ws_port\":29092,"
        + "\"proxy_url\":\"https://dragon-belt-friend-share.2n6.me\",\"metrics_port\":29090,"
        + "\"metrics_https_port\":29443,\"webrtc_port\":29093,\"quic_port\":29094,"
        + "\"bootstrap_registration_id\":\"relay:orbitdb-relay:orbitdb-relay\"}");
    assertThat(request.publicIpv4()).isEqualTo("203.0.113.8");
    assertThat(request.publicIpv6()).contains("2001:db8::8");
    assertThat(request.proxyHostname()).contains("dragon-belt-friend-share.2n6.me");
    assertThat(request.tcpPort()).isEqualTo(29091);
    assertThat(request.metricsHttpsPort()).hasValue(29443);
    assertThat(request.registrationId()).contains("relay:orbitdb-relay:orbitdb-relay");
    assertThat(request.noStart()).isFalse();
    assertThat(request.warnings()).isEmpty();
  }

  @ParameterizedTest
  @ValueSource(strings = {"bootstrap_owner_private_key", "owner_private_key",
      "bootstrapOwnerPrivateKey", "ownerPrivateKey"})
  void parse_shouldRefuseSayingWhy_whenAnOwnerKeyFieldIsPresent(final String field) {
    assertRejected("{" + VALID + ",\"" + field + "\":\"0x" + "11".repeat(32) + "\"}",
        "owner_private_key_rejected", field);
    assertRejected("{" + VALID + ",\"" + field + "\":null}", "owner_private_key_rejected",
        "never accepts the owner's private key");
  }

  @Test
  void parse_shouldNameEveryUnknownField_whenSome() {
    assertRejected("{" + VALID + ",\"publicIpv4\":\"1.2.3.4\",\"extra\":1}", "unknown_field",
        "unknown fields publicIpv4, extra");
  }

  @ParameterizedTest
  @ValueSource(strings = {"true", "0", "65536", "-1", "\"29091\"", "29091.5", "1e3",
      "99999999999"})
  void parse_shouldRefuse_whenAPortIsNotAPort(final String value) {
    assertRejected("{\"public_ipv4\":\"203.0.113.8\",\"tcp_port\":" + value
        + ",\"ws_port\":29092}", "invalid_field", "tcp_port must be an integer");
    assertRejected("{" + VALID + ",\"quic_port\":" + value + "}", "invalid_field",
        "quic_port must be an integer");
  }

  @Test
  void parse_shouldRefuse_whenARequiredFieldIsMissing() {
    assertRejected("{\"public_ipv4\":\"203.0.113.8\",\"tcp_port\":29091}", "missing_field",
        "ws_port is required");
    assertRejected("{\"tcp_port\":29091,\"ws_port\":29092}", "missing_field",
        "public_ipv4 is required");
    assertRejected("", "missing_field", "public_ipv4 is required");
  }

  @Test
  void parse_shouldRefuse_whenPublicIpv4HoldsAnIpv6Address() {
    assertRejected("{\"public_ipv4\":\"2001:db8::8\",\"tcp_port\":1,\"ws_port\":2}",
        "invalid_field", "an IPv6 address goes in public_ipv6");
    assertRejected("{\"public_ipv4\":\"example.com\",\"tcp_port\":1,\"ws_port\":2}",
        "invalid_field", "public_ipv4 must be an IPv4 address");
  }

  @Test
  void parse_shouldAcceptLoopback_whenPublicIpv4Is127001() throws Exception {
    assertThat(parse("{\"public_ipv4\":\"127.0.0.1\",\"tcp_port\":1,\"ws_port\":2}")
        .publicIpv4()).isEqualTo("127.0.0.1");
  }

  @Test
  void parse_shouldRefuse_whenShapesAreWrong() {
    assertRejected("[1,2]", "invalid_json", "JSON object");
    assertRejected("{\"public_ipv4\":", "invalid_json", "not valid JSON");
    assertRejected("{" + VALID + ",\"tcp_port\":1}", "invalid_json", "Duplicate field");
    assertRejected("{" + VALID + ",\"public_ipv6\":\"203.0.113.9\"}", "invalid_field",
        "public_ipv6 must be an IPv6 address");
    assertRejected("{" + VALID + ",\"proxy_url\":\"https://\"}", "invalid_field", "proxy_url");
    assertRejected("{" + VALID + ",\"proxy_url\":5}", "invalid_field", "must be a string");
    assertRejected("{" + VALID + ",\"no_start\":\"yes\"}", "invalid_field", "no_start");
    assertRejected("{" + VALID + ",\"bootstrap_owner_address\":\"0x12\"}", "invalid_field",
        "bootstrap_owner_address");
    assertRejected("{" + VALID + ",\"bootstrap_owner_authorization_b64\":\"!!\"}",
        "invalid_field", "bootstrap_owner_authorization_b64");
  }

  @Test
  void parse_shouldTakeTheHostname_whenProxyUrlIsAUrlOrBare() throws Exception {
    assertThat(parse("{" + VALID + ",\"proxy_url\":\"https://X.2n6.me/path\"}").proxyHostname())
        .contains("x.2n6.me");
    assertThat(parse("{" + VALID + ",\"proxy_url\":\"x.2n6.me\"}").proxyHostname())
        .contains("x.2n6.me");
    assertThat(parse("{" + VALID + ",\"proxy_url\":\"  \"}").proxyHostname()).isEmpty();
  }

  @Test
  void parse_shouldWarnAndIgnore_whenARelayIdentityIsSent() throws Exception {
    final ConfigureRequest request = parse("{" + VALID
        + ",\"bootstrap_publisher_libp2p_identity_hex\":\"08011240" + "22".repeat(64) + "\"}");
    assertThat(request.warnings()).singleElement().asString()
        .contains("bootstrap_publisher_libp2p_identity_hex").contains("ignored");
  }

  @Test
  void parse_shouldCarryThePublisherKeyWithoutShowingIt_whenOneIsSent() throws Exception {
    final String hex = "0x" + "22".repeat(32);
    final ConfigureRequest request = parse("{" + VALID
        + ",\"bootstrap_publisher_private_key\":\"" + hex + "\"}");
    // Spec 2.9: whether it is used is the guest's decision (GuestStateDir.adoptPublisherKey).
    assertThat(request.publisherKey().orElseThrow().toHex()).isEqualTo(hex);
    assertThat(request.toString()).doesNotContain("22".repeat(32));
    assertThat(request.toEnvironment(java.nio.file.Path.of("/d")).values().toString())
        .doesNotContain("22".repeat(32));
    assertThat(request.publicFacts().toString()).doesNotContain("22".repeat(32));
    assertRejected("{" + VALID + ",\"bootstrap_publisher_private_key\":\"0x" + "zz".repeat(32)
        + "\"}", "invalid_field", "bootstrap_publisher_private_key");
    assertThat(parse("{" + VALID + ",\"bootstrap_publisher_private_key\":null}").publisherKey())
        .isEmpty();
  }

  @Test
  void fromEnvironment_shouldRoundTrip_whenWrittenByToEnvironment() throws Exception {
    final String authorization = Base64.getEncoder().encodeToString(
        "{\"scheme\":\"personal_sign\",\"payload\":{},\"signature\":\"0x00\"}"
            .getBytes(StandardCharsets.UTF_8));
    final ConfigureRequest request = parse("{" + VALID + ",\"public_ipv6\":\"2001:db8::8\","
        + "\"proxy_url\":\"x.2n6.me\",\"metrics_port\":29090,\"bootstrap_registration_id\":"
        + "\"relay:orbitdb-relay:a\",\"bootstrap_owner_address\":\"0x"
        + "ab".repeat(20) + "\",\"bootstrap_owner_authorization_b64\":\"" + authorization + "\"}");
    final java.util.Map<String, String> env = request.toEnvironment(
        java.nio.file.Path.of("/var/lib/guest/data"));
    assertThat(env).containsEntry("PUBLIC_IPV4", "203.0.113.8")
        .containsEntry("EXTERNAL_RELAY_TCP_PORT", "29091")
        .containsEntry("PROXY_HOSTNAME", "x.2n6.me")
        .containsEntry("DATASTORE_PATH", "/var/lib/guest/data")
        .doesNotContainKey("RELAY_PRIV_KEY");
    assertThat(ConfigureRequest.fromEnvironment(env)).isEqualTo(request);
  }
}
