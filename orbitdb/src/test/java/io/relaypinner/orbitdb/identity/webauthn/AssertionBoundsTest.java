package io.relaypinner.orbitdb.identity.webauthn;

import static org.assertj.core.api.Assertions.assertThat;

import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.orbitdb.identity.IdentityRefusal;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The size bounds of a passkey assertion (an anonymous writer chooses every byte of it): each
 * field over its bound is refused as a malformed proof before any JSON is parsed or any
 * signature checked, and client data nested past 8 levels is not parsed.
 */
class AssertionBoundsTest {
  private static final PasskeyKey KEY = PasskeyKey.fromRaw(Keys.generate(KeyType.ED25519,
      new SecureRandom()).publicKey().raw()).orElseThrow();
  private static final byte[] CHALLENGE = new byte[32];
  private static final Assertion.Expectation ANY = Assertion.Expectation.unbound(false, false);

  private static byte[] authenticatorData(final int length) {
    final byte[] data = new byte[length];
    data[32] = 0x01;
    return data;
  }

  private static Optional<IdentityRefusal> check(final byte[] authenticatorData,
      final byte[] clientData, final byte[] signature) {
    return new Assertion(authenticatorData, clientData, signature).check(CHALLENGE, ANY, KEY);
  }

  @Test
  void eachFieldOverItsBound_isAMalformedProof() {
    final byte[] client = "{\"type\":\"webauthn.get\"}".getBytes(StandardCharsets.UTF_8);
    assertThat(check(authenticatorData(Assertion.MAX_AUTHENTICATOR_DATA + 1), client,
        new byte[64])).hasValueSatisfying(r ->
            assertThat(r.label()).isEqualTo(IdentityRefusal.MALFORMED_PROOF));
    final byte[] hugeClient = new byte[Assertion.MAX_CLIENT_DATA + 1];
    Arrays.fill(hugeClient, (byte) ' ');
    assertThat(check(authenticatorData(37), hugeClient, new byte[64])).hasValueSatisfying(r ->
        assertThat(r.label()).isEqualTo(IdentityRefusal.MALFORMED_PROOF));
    assertThat(check(authenticatorData(37), client, new byte[Assertion.MAX_SIGNATURE + 1]))
        .hasValueSatisfying(r -> assertThat(r.label()).isEqualTo(IdentityRefusal.MALFORMED_PROOF));
    assertThat(check(authenticatorData(36), client, new byte[64])).hasValueSatisfying(r ->
        assertThat(r.label()).isEqualTo(IdentityRefusal.MALFORMED_PROOF));
  }

  @Test
  void clientDataNestedDeeperThanEightLevels_isNotParsed() {
    final String nested = "{\"a\":".repeat(20) + "1" + "}".repeat(20);
    final Assertion deep = new Assertion(authenticatorData(37),
        nested.getBytes(StandardCharsets.UTF_8), new byte[64]);
    assertThat(deep.challenge()).isEmpty();
    assertThat(deep.check(CHALLENGE, ANY, KEY)).isPresent();
  }
}
