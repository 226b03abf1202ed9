package io.relaypinner.libp2p.security.noise;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relaypinner.libp2p.core.InternalErrorException;
import io.relaypinner.libp2p.core.ProtocolViolationException;
import java.nio.ByteBuffer;
import java.util.HexFormat;
import org.bouncycastle.crypto.InvalidCipherTextException;
import org.bouncycastle.crypto.modes.ChaCha20Poly1305;
import org.bouncycastle.crypto.params.AEADParameters;
import org.bouncycastle.crypto.params.KeyParameter;
import org.junit.jupiter.api.Test;

class CipherStateTest {
  private static final byte[] KEY =
      HexFormat.of().parseHex("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");

  /** ChaCha20-Poly1305 by BouncyCastle: an independent implementation to compare against. */
  private static byte[] bcSeal(final byte[] nonce, final byte[] ad, final byte[] plaintext)
      throws InvalidCipherTextException {
    final ChaCha20Poly1305 aead = new ChaCha20Poly1305();
    aead.init(true, new AEADParameters(new KeyParameter(KEY), 128, nonce, ad));
    final byte[] out = new byte[plaintext.length + 16];
    final int written = aead.processBytes(plaintext, 0, plaintext.length, out, 0);
    aead.doFinal(out, written);
    return out;
  }

  @Test
  void encryptWithAd_shouldPutCounterLittleEndianAfterFourZeroBytes() throws Exception {
    final CipherState cs = CipherState.withKey(KEY);
    cs.setNonceForTest(0x0102030405060708L);
    final byte[] ad = "ad".getBytes();
    final byte[] plaintext = "plaintext".getBytes();
    final byte[] nonce = HexFormat.of().parseHex("000000000807060504030201");
    assertThat(cs.encryptWithAd(ad, plaintext)).isEqualTo(bcSeal(nonce, ad, plaintext));
    assertThat(cs.nonce()).isEqualTo(0x0102030405060709L);
  }

  @Test
  void encrypt_shouldReinitialiseOneCipherForEveryMessage_whenNoncesIncrease() throws Exception {
    final CipherState sender = CipherState.withKey(KEY);
    final CipherState receiver = CipherState.withKey(KEY);
    final byte[] plaintext = new byte[100];
    for (int i = 0; i < 1000; i++) {
      plaintext[0] = (byte) i;
      final ByteBuffer ciphertext = ByteBuffer.allocateDirect(116);
      sender.encrypt(ByteBuffer.wrap(plaintext), ciphertext);
      ciphertext.flip();
      final ByteBuffer copy = ciphertext.duplicate();
      final byte[] wire = new byte[116];
      copy.get(wire);
      final byte[] nonce = new byte[12];
      nonce[4] = (byte) i;
      nonce[5] = (byte) (i >>> 8);
      assertThat(wire).isEqualTo(bcSeal(nonce, new byte[0], plaintext));
      final ByteBuffer decrypted = ByteBuffer.allocate(100);
      receiver.decrypt(ciphertext, decrypted);
      assertThat(decrypted.array()).isEqualTo(plaintext);
    }
    assertThat(sender.nonce()).isEqualTo(1000);
    assertThat(receiver.nonce()).isEqualTo(1000);
  }

  @Test
  void decryptWithAd_shouldRejectAndKeepNonce_whenTagDoesNotVerify() {
    final CipherState sender = CipherState.withKey(KEY);
    final CipherState receiver = CipherState.withKey(KEY);
    final byte[] ciphertext = sender.encryptWithAd(new byte[0], "hi".getBytes());
    ciphertext[0] ^= 1;
    assertThatThrownBy(() -> receiver.decryptWithAd(new byte[0], ciphertext))
        .isExactlyInstanceOf(ProtocolViolationException.class);
    assertThat(receiver.nonce()).isZero();
    ciphertext[0] ^= 1;
    assertThat(receiver.decryptWithAd(new byte[0], ciphertext)).isEqualTo("hi".getBytes());
  }

  @Test
  void decryptWithAd_shouldReject_whenAssociatedDataDiffers() {
    final byte[] ciphertext = CipherState.withKey(KEY).encryptWithAd("h1".getBytes(), new byte[3]);
    assertThatThrownBy(() -> CipherState.withKey(KEY).decryptWithAd("h2".getBytes(), ciphertext))
        .isExactlyInstanceOf(ProtocolViolationException.class);
  }

  @Test
  void decrypt_shouldReject_whenShorterThanTag() {
    assertThatThrownBy(
            () -> CipherState.withKey(KEY).decrypt(ByteBuffer.allocate(15), ByteBuffer.allocate(0)))
        .isExactlyInstanceOf(ProtocolViolationException.class);
  }

  @Test
  void encrypt_shouldRefuse_whenNonceReachesReservedValue() {
    final CipherState cs = CipherState.withKey(KEY);
    cs.setNonceForTest(-2L);
    cs.encryptWithAd(new byte[0], new byte[1]);
    assertThatThrownBy(() -> cs.encryptWithAd(new byte[0], new byte[1]))
        .isExactlyInstanceOf(InternalErrorException.class)
        .hasMessageContaining("exhausted");
  }

  @Test
  void encryptWithAd_shouldPassPlaintextThrough_whenNoKeyYet() {
    final CipherState cs = CipherState.empty();
    assertThat(cs.hasKey()).isFalse();
    assertThat(cs.encryptWithAd("h".getBytes(), "abc".getBytes())).isEqualTo("abc".getBytes());
    assertThat(cs.decryptWithAd("h".getBytes(), "abc".getBytes())).isEqualTo("abc".getBytes());
    assertThat(cs.nonce()).isZero();
  }
}
