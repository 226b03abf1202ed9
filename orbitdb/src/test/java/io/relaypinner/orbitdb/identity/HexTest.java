package io.relaypinner.orbitdb.identity;

import static org.assertj.core.api.Assertions.assertThat;

import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PrivateKey;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import org.junit.jupiter.api.Test;

class HexTest {
  @Test
  void publicKey_isParsedOnce_andTheSameKeyVerifiesEverySignatureOfItsWriter() {
    final PrivateKey key = Keys.generate(KeyType.SECP256K1, new SecureRandom());
    final String hex = Hex.encode(key.publicKey().raw());
    assertThat(Hex.publicKey(hex)).containsSame(Hex.publicKey(hex).orElseThrow());
    for (int i = 0; i < 3; i++) {
      final byte[] data = ("entry " + i).getBytes(StandardCharsets.UTF_8);
      assertThat(Hex.verify(Hex.encode(key.sign(data)), hex, data)).isTrue();
      assertThat(Hex.verify(Hex.encode(key.sign(data)), hex, ("other " + i)
          .getBytes(StandardCharsets.UTF_8))).isFalse();
    }
  }

  @Test
  void publicKey_isEmpty_forWhatIsNoKey_andThatIsNotRemembered() {
    assertThat(Hex.publicKey("zz")).isEmpty();
    assertThat(Hex.publicKey("02" + "00".repeat(32))).isEmpty();
    assertThat(Hex.publicKey("abcd")).isEmpty();
  }
}
