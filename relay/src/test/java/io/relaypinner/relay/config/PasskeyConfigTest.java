package io.relaypinner.relay.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code RELAY_WEBAUTHN_ORIGINS}, {@code RELAY_WEBAUTHN_RP_IDS} and
 * {@code RELAY_WEBAUTHN_REQUIRE_LOW_S}.
 */
class PasskeyConfigTest {
  @Test
  void fromEnvironment_shouldConfigureNoRelyingParty_whenUnset() {
    assertThat(RelayConfig.DEFAULT.passkeys()).isEqualTo(PasskeyConfig.NONE);
    assertThat(RelayConfig.DEFAULT.passkeys().toWebAuthnConfig().configured()).isFalse();
  }

  @Test
  void fromEnvironment_shouldDeriveRpIdsFromOrigins_whenOnlyOriginsAreSet() {
    final RelayConfig c = RelayConfig.fromEnvironment(Map.of("RELAY_WEBAUTHN_ORIGINS",
        "https://app.example.com, http://localhost:5173"));
    assertThat(c.passkeys().origins())
        .containsExactly("https://app.example.com", "http://localhost:5173");
    assertThat(c.passkeys().toWebAuthnConfig().rpIds())
        .containsExactlyInAnyOrder("app.example.com", "localhost");
    assertThat(c.toBuilder().build()).isEqualTo(c);
  }

  @Test
  void fromEnvironment_shouldUseGivenRpIds_whenSet() {
    final RelayConfig c = RelayConfig.fromEnvironment(Map.of(
        "RELAY_WEBAUTHN_ORIGINS", "https://app.example.com",
        "RELAY_WEBAUTHN_RP_IDS", "example.com"));
    assertThat(c.passkeys().toWebAuthnConfig().rpIds()).containsExactly("example.com");
  }

  @ParameterizedTest
  @ValueSource(strings = {"app.example.com", "https://app.example.com/", "http://app.example.com",
      "https://App.Example.com", "https://app.example.com/path", "*"})
  void fromEnvironment_shouldRejectOriginNamingVariable_whenNotAnHttpsOrigin(final String v) {
    assertThatThrownBy(() -> RelayConfig.fromEnvironment(Map.of("RELAY_WEBAUTHN_ORIGINS", v)))
        .isInstanceOfSatisfying(InvalidConfigException.class,
            e -> assertThat(e.variable()).isEqualTo("RELAY_WEBAUTHN_ORIGINS"));
  }

  @Test
  void fromEnvironment_shouldRejectRpIds_whenBadOrWithoutOrigins() {
    assertThatThrownBy(() -> RelayConfig.fromEnvironment(Map.of(
        "RELAY_WEBAUTHN_ORIGINS", "https://app.example.com", "RELAY_WEBAUTHN_RP_IDS",
        "https://example.com")))
        .isInstanceOfSatisfying(InvalidConfigException.class,
            e -> assertThat(e.variable()).isEqualTo("RELAY_WEBAUTHN_RP_IDS"));
    assertThatThrownBy(() -> RelayConfig.fromEnvironment(Map.of(
        "RELAY_WEBAUTHN_RP_IDS", "example.com")))
        .isInstanceOfSatisfying(InvalidConfigException.class,
            e -> assertThat(e.variable()).isEqualTo("RELAY_WEBAUTHN_RP_IDS"));
  }

  @Test
  void fromEnvironment_shouldRequireLowS_onlyWhenAskedFor() {
    assertThat(RelayConfig.DEFAULT.passkeys().toWebAuthnConfig().requireLowS()).isFalse();
    final RelayConfig c = RelayConfig.fromEnvironment(Map.of(
        "RELAY_WEBAUTHN_ORIGINS", "https://app.example.com",
        "RELAY_WEBAUTHN_REQUIRE_LOW_S", "true"));
    assertThat(c.passkeys().toWebAuthnConfig().requireLowS()).isTrue();
    assertThat(c.toBuilder().build()).isEqualTo(c);
    assertThatThrownBy(() -> RelayConfig.fromEnvironment(Map.of(
        "RELAY_WEBAUTHN_REQUIRE_LOW_S", "maybe")))
        .isInstanceOfSatisfying(InvalidConfigException.class,
            e -> assertThat(e.variable()).isEqualTo("RELAY_WEBAUTHN_REQUIRE_LOW_S"));
  }
}
