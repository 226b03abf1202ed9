package io.relaypinner.orbitdb.identity.webauthn;

import static org.assertj.core.api.Assertions.assertThat;

import io.relaypinner.orbitdb.identity.Hex;
import io.relaypinner.orbitdb.identity.Identity;
import java.util.Arrays;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The varsig envelope, P-256 points and did:keys, against the provider's own bytes. */
class VarsigTest {
  private static byte[] envelope(final String vector) {
    final Identity identity = PasskeyVectors.LOADED.get(vector).decoded();
    return Hex.decode(identity.idSignature()).orElseThrow();
  }

  @Test
  void decode_shouldReadTheProvidersEnvelopes_forBothAlgorithms() {
    final Optional<Varsig> p256 = Varsig.decode(envelope("webauthn-varsig-p256"));
    assertThat(p256).isPresent();
    assertThat(p256.get().algorithm()).isEqualTo(PasskeyKey.Algorithm.P256);
    assertThat(P256.parseDer(p256.get().assertion().signature())).isPresent();
    final Optional<Varsig> ed = Varsig.decode(envelope("webauthn-varsig-ed25519"));
    assertThat(ed).isPresent();
    assertThat(ed.get().algorithm()).isEqualTo(PasskeyKey.Algorithm.ED25519);
    assertThat(ed.get().assertion().signature()).hasSize(64);
    assertThat(ed.get().assertion().userPresent()).isTrue();
    assertThat(ed.get().assertion().userVerified()).isTrue();
  }

  @Test
  void decode_shouldRefuse_whenTruncatedOrHeaderIsWrong() {
    final byte[] good = envelope("webauthn-varsig-p256");
    for (int len = 0; len < 60; len++) {
      assertThat(Varsig.decode(Arrays.copyOf(good, len))).as("length " + len).isEmpty();
    }
    final byte[] version = good.clone();
    version[1] = 2;
    assertThat(Varsig.decode(version)).isEmpty();
    final byte[] algorithm = good.clone();
    algorithm[2] = (byte) 0xed; // EdDSA with the P-256 curve code
    assertThat(Varsig.decode(algorithm)).isEmpty();
    assertThat(Varsig.decode(new byte[Varsig.MAX_LENGTH + 1])).isEmpty();
  }

  @Test
  void didKey_shouldNameTheSameKey_whenCompressedOrUncompressed() {
    final SoftPasskey passkey = new SoftPasskey(PasskeyKey.Algorithm.P256);
    final PasskeyKey uncompressed = PasskeyKey.fromDidKey(passkey.didKey()).orElseThrow();
    final PasskeyKey compressed = PasskeyKey.fromDidKey(passkey.compressedDidKey()).orElseThrow();
    assertThat(compressed).isEqualTo(uncompressed);
    assertThat(uncompressed.raw()).isEqualTo(passkey.publicKey);
    final byte[] offCurve = passkey.publicKey.clone();
    offCurve[64] ^= 1;
    assertThat(P256.uncompressed(offCurve)).isEmpty();
    assertThat(PasskeyKey.fromDidKey("did:key:z6Mk" + "x".repeat(200))).isEmpty();
    assertThat(PasskeyKey.fromDidKey("did:web:example.com")).isEmpty();
  }
}
