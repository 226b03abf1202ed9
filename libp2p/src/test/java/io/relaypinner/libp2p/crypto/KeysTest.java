package io.relaypinner.libp2p.crypto;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.relaypinner.testkit.TestVectors;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.Random;
import org.bouncycastle.asn1.ASN1Integer;
import org.bouncycastle.asn1.ASN1Sequence;
import org.junit.jupiter.api.Test;

class KeysTest {
  private static final HexFormat HEX = HexFormat.of();
  private static final byte[] MESSAGE = "hello world".getBytes(StandardCharsets.UTF_8);

  private static Map<String, byte[]> specVectors() throws IOException {
    final JsonNode root = new ObjectMapper().readTree(
        TestVectors.path("peer-ids/peer-ids-vectors.json").toFile());
    final Map<String, byte[]> byLabel = new HashMap<>();
    for (final JsonNode vector : root.get("key_vectors")) {
      byLabel.put(vector.get("label").asText(), HEX.parseHex(vector.get("protobuf_hex").asText()));
    }
    return byLabel;
  }

  @Test
  void unmarshalPrivateKey_shouldDeriveTheSpecPublicKey_forEd25519AndSecp256k1() throws IOException {
    final Map<String, byte[]> vectors = specVectors();
    for (final String type : new String[] {"ED25519", "secp256k1"}) {
      final byte[] privatePb = vectors.get(type + " private key");
      final byte[] publicPb = vectors.get(type + " public key");
      final PrivateKey key = Keys.unmarshalPrivateKey(privatePb);
      assertThat(key.publicKey().marshal()).as(type).isEqualTo(publicPb);
      assertThat(key.marshal()).as(type + " re-marshalled").isEqualTo(privatePb);
      assertThat(Keys.unmarshalPublicKey(publicPb)).isEqualTo(key.publicKey());
      assertThat(key.publicKey().verify(MESSAGE, key.sign(MESSAGE))).isTrue();
    }
  }

  @Test
  void unmarshal_shouldRefuseRsaAndEcdsa_namingTheType() throws IOException {
    final Map<String, byte[]> vectors = specVectors();
    assertThatThrownBy(() -> Keys.unmarshalPublicKey(vectors.get("rsa public key")))
        .isInstanceOf(KeyFormatException.class).hasMessageContaining("RSA");
    assertThatThrownBy(() -> Keys.unmarshalPrivateKey(vectors.get("ECDSA private key")))
        .isInstanceOf(KeyFormatException.class).hasMessageContaining("ECDSA");
  }

  @Test
  void sign_shouldVerify_andRejectTamperedMessageOrSignature() {
    final SecureRandom random = new SecureRandom();
    for (final KeyType type : new KeyType[] {KeyType.ED25519, KeyType.SECP256K1}) {
      final PrivateKey key = Keys.generate(type, random);
      final byte[] signature = key.sign(MESSAGE);
      assertThat(key.publicKey().verify(MESSAGE, signature)).as(type.name()).isTrue();
      final byte[] otherMessage = MESSAGE.clone();
      otherMessage[0] ^= 1;
      assertThat(key.publicKey().verify(otherMessage, signature)).isFalse();
      final byte[] badSignature = signature.clone();
      badSignature[badSignature.length - 1] ^= 1;
      assertThat(key.publicKey().verify(MESSAGE, badSignature)).isFalse();
      assertThat(key.publicKey().verify(MESSAGE, new byte[0])).isFalse();
      assertThat(key.publicKey().verify(MESSAGE, Arrays.copyOf(signature, 3))).isFalse();
      final PublicKey otherKey = Keys.generate(type, random).publicKey();
      assertThat(otherKey.verify(MESSAGE, signature)).isFalse();
    }
  }

  @Test
  void secp256k1Sign_shouldBeDeterministicAndLowS() {
    final PrivateKey key = Secp256k1PrivateKey.fromRaw(filled(0x2a));
    for (int i = 0; i < 64; i++) {
      final byte[] message = ("message " + i).getBytes(StandardCharsets.UTF_8);
      final byte[] signature = key.sign(message);
      assertThat(key.sign(message)).isEqualTo(signature);
      final BigInteger s = ASN1Integer.getInstance(
          ASN1Sequence.getInstance(signature).getObjectAt(1)).getValue();
      assertThat(s).isLessThanOrEqualTo(Secp256k1Curve.HALF_N);
    }
  }

  @Test
  void secp256k1Verify_shouldRejectHighS_whenTheSameSignatureIsValidOtherwise() {
    final PrivateKey key = Secp256k1PrivateKey.fromRaw(filled(0x07));
    final ASN1Sequence sequence = ASN1Sequence.getInstance(key.sign(MESSAGE));
    final BigInteger r = ASN1Integer.getInstance(sequence.getObjectAt(0)).getValue();
    final BigInteger s = ASN1Integer.getInstance(sequence.getObjectAt(1)).getValue();
    final byte[] highS = Secp256k1Curve.encodeDer(r, Secp256k1Curve.N.subtract(s));
    assertThat(key.publicKey().verify(MESSAGE, highS)).isFalse();
  }

  @Test
  void secp256k1Verify_shouldRejectNonCanonicalDer() {
    final PrivateKey key = Secp256k1PrivateKey.fromRaw(filled(0x07));
    final byte[] der = key.sign(MESSAGE);
    // Long-form length (BER) for the outer sequence: same values, different bytes.
    final byte[] ber = new byte[der.length + 1];
    ber[0] = 0x30;
    ber[1] = (byte) 0x81;
    ber[2] = der[1];
    System.arraycopy(der, 2, ber, 3, der.length - 2);
    assertThat(key.publicKey().verify(MESSAGE, ber)).isFalse();
    final byte[] trailing = Arrays.copyOf(der, der.length + 1);
    assertThat(key.publicKey().verify(MESSAGE, trailing)).isFalse();
  }

  @Test
  void unmarshal_shouldRejectMalformedKeys() {
    assertThatThrownBy(() -> Keys.unmarshalPublicKey(HEX.parseHex("0801")))
        .isInstanceOf(KeyFormatException.class);
    assertThatThrownBy(() -> Keys.unmarshalPublicKey(HEX.parseHex("080112031234ff")))
        .isInstanceOf(KeyFormatException.class);
    // 33 bytes with a 0x02 prefix but an x that is not on the curve (x = 5 has no y).
    final byte[] notOnCurve = new byte[33];
    notOnCurve[0] = 0x02;
    notOnCurve[32] = 0x05;
    assertThatThrownBy(() -> Keys.publicKey(KeyType.SECP256K1, notOnCurve))
        .isInstanceOf(KeyFormatException.class);
    assertThatThrownBy(() -> Secp256k1PrivateKey.fromRaw(new byte[32]))
        .isInstanceOf(KeyFormatException.class).hasMessageContaining("out of range");
    final byte[] mismatched = Ed25519PrivateKey.fromSeed(filled(1)).raw();
    mismatched[40] ^= 1;
    assertThatThrownBy(() -> Keys.unmarshalPrivateKey(Keys.marshalPrivate(KeyType.ED25519,
        mismatched))).isInstanceOf(KeyFormatException.class)
        .hasMessageContaining("does not match");
    assertThatThrownBy(() -> Keys.unmarshalPrivateKey(new byte[Keys.MAX_ENCODED_LENGTH + 1]))
        .isInstanceOf(KeyFormatException.class).hasMessageContaining("exceeds");
    assertThatThrownBy(() -> Keys.unmarshalPrivateKeyHex("08zz"))
        .isInstanceOf(KeyFormatException.class).hasMessageContaining("hex");
  }

  @Test
  void unmarshal_shouldOnlyThrowKeyFormatException_onRandomBytes() {
    final Random random = new Random(42);
    for (int i = 0; i < 5000; i++) {
      final byte[] junk = new byte[random.nextInt(80)];
      random.nextBytes(junk);
      if (i % 2 == 0 && junk.length > 4) {
        // Keep a plausible header so the fuzzing reaches the key decoders.
        junk[0] = 0x08;
        junk[1] = (byte) (1 + random.nextInt(2));
        junk[2] = 0x12;
        junk[3] = (byte) (junk.length - 4);
      }
      for (final Runnable call : new Runnable[] {
          () -> Keys.unmarshalPublicKey(junk), () -> Keys.unmarshalPrivateKey(junk)}) {
        try {
          call.run();
        } catch (final KeyFormatException expected) {
          // the only acceptable failure
        }
      }
    }
  }

  @Test
  void toString_shouldNotRevealKeyMaterial() {
    final PrivateKey key = Ed25519PrivateKey.fromSeed(filled(0x55));
    assertThat(key.toString()).doesNotContain(HEX.formatHex(filled(0x55)))
        .contains(key.publicKey().peerId().toBase58());
  }

  static byte[] filled(final int value) {
    final byte[] bytes = new byte[32];
    Arrays.fill(bytes, (byte) value);
    return bytes;
  }
}
