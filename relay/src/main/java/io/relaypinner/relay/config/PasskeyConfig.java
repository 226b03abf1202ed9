package io.relaypinner.relay.config;

import io.relaypinner.orbitdb.identity.webauthn.WebAuthnConfig;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The relying parties whose passkey identities the relay accepts (CONTRACT.md:
 * {@code RELAY_WEBAUTHN_ORIGINS}, {@code RELAY_WEBAUTHN_RP_IDS}, and the opt-in
 * {@code RELAY_WEBAUTHN_REQUIRE_LOW_S}). Without origins,
 * {@code webauthn-varsig} writers are refused; there is no setting that skips the checks.
 *
 * @param origins allowed origins ({@code https://app.example}, {@code http://localhost:5173})
 * @param rpIds allowed rpIds; empty = the hosts of the origins
 * @param requireLowS whether P-256 passkey signatures must have S in the lower half (off by
 *     default: authenticators do not normalise S; docs/identities.md)
 */
public record PasskeyConfig(List<String> origins, List<String> rpIds, boolean requireLowS) {
  /** No relying party. */
  public static final PasskeyConfig NONE = new PasskeyConfig(List.of(), List.of());

  /** Either half of S accepted. */
  public PasskeyConfig(final List<String> origins, final List<String> rpIds) {
    this(origins, rpIds, false);
  }

  public PasskeyConfig {
    origins = List.copyOf(origins);
    rpIds = List.copyOf(rpIds);
    for (final String origin : origins) {
      try {
        new WebAuthnConfig(Set.of(origin), Set.of(), true);
      } catch (final IllegalArgumentException e) {
        throw InvalidConfigException.badValue("RELAY_WEBAUTHN_ORIGINS", origin,
            "an https origin (scheme://host[:port], lower case, nothing after; http only for"
                + " localhost)");
      }
    }
    if (origins.size() > WebAuthnConfig.MAX_ENTRIES) {
      throw InvalidConfigException.badValue("RELAY_WEBAUTHN_ORIGINS", origins.size() + " origins",
          "at most " + WebAuthnConfig.MAX_ENTRIES + " origins");
    }
    if (!rpIds.isEmpty() && origins.isEmpty()) {
      throw InvalidConfigException.badValue("RELAY_WEBAUTHN_RP_IDS", String.join(",", rpIds),
          "usable without RELAY_WEBAUTHN_ORIGINS (set the origins too)");
    }
    for (final String rpId : rpIds) {
      try {
        new WebAuthnConfig(Set.of("https://" + rpId), Set.of(rpId), true);
      } catch (final IllegalArgumentException e) {
        throw InvalidConfigException.badValue("RELAY_WEBAUTHN_RP_IDS", rpId,
            "a lower-case host name");
      }
    }
    if (rpIds.size() > WebAuthnConfig.MAX_ENTRIES) {
      throw InvalidConfigException.badValue("RELAY_WEBAUTHN_RP_IDS", rpIds.size() + " rpIds",
          "at most " + WebAuthnConfig.MAX_ENTRIES + " rpIds");
    }
  }

  /** The verifier configuration (UV required, as the provider's own verifier requires it). */
  public WebAuthnConfig toWebAuthnConfig() {
    return new WebAuthnConfig(new LinkedHashSet<>(origins), new LinkedHashSet<>(rpIds), true,
        requireLowS);
  }
}
