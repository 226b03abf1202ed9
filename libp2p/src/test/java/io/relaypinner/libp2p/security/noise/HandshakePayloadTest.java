package io.relaypinner.libp2p.security.noise;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.relaypinner.libp2p.core.BadPeerException;
import io.relaypinner.libp2p.core.ProtocolViolationException;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.libp2p.security.noise.pb.NoiseProtos;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

class HandshakePayloadTest {
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final HexFormat HEX = HexFormat.of();

  private final PrivateKey identity = Keys.generate(KeyType.ED25519, RANDOM);
  private final byte[] staticKey = X25519KeyPair.generate(RANDOM).publicKey();

  @Test
  void encode_shouldWriteSpecFieldNumbersInOrder_likeJsLibp2pNoise() {
    final byte[] payload = HandshakePayload.encode(identity, staticKey, List.of("/yamux/1.0.0"));
    final byte[] key = identity.publicKey().marshal();
    final byte[] sig = identity.sign(HandshakePayload.signedData(staticKey));
    // identity_key = 1 (0x0a), identity_sig = 2 (0x12), extensions = 4 (0x22) holding
    // stream_muxers = 2 (0x12). Ed25519 signatures are deterministic, so the bytes are too.
    final String expected =
        "0a24"
            + HEX.formatHex(key)
            + "1240"
            + HEX.formatHex(sig)
            + "220e120c"
            + HEX.formatHex("/yamux/1.0.0".getBytes(StandardCharsets.US_ASCII));
    assertThat(HEX.formatHex(payload)).isEqualTo(expected);
  }

  @Test
  void signedData_shouldBePrefixThenStaticKey() {
    assertThat(new String(HandshakePayload.signedData(new byte[0]), StandardCharsets.US_ASCII))
        .isEqualTo("noise-libp2p-static-key:");
    assertThat(HandshakePayload.signedData(staticKey)).hasSize(24 + 32);
  }

  @Test
  void encode_shouldOmitExtensions_whenNoMuxersConfigured() throws Exception {
    final NoiseProtos.NoiseHandshakePayload decoded =
        NoiseProtos.NoiseHandshakePayload.parseFrom(
            HandshakePayload.encode(identity, staticKey, List.of()));
    assertThat(decoded.hasExtensions()).isFalse();
  }

  @Test
  void decodeAndVerify_shouldReturnIdentityAndMuxers_whenSignatureMatchesStaticKey() {
    final HandshakePayload.RemoteIdentity remote =
        HandshakePayload.decodeAndVerify(
            HandshakePayload.encode(identity, staticKey, List.of("/yamux/1.0.0", "/mplex/6.7.0")),
            staticKey);
    assertThat(remote.publicKey()).isEqualTo(identity.publicKey());
    assertThat(remote.peerId()).isEqualTo(identity.publicKey().peerId());
    assertThat(remote.streamMuxers()).containsExactly("/yamux/1.0.0", "/mplex/6.7.0");
  }

  @Test
  void decodeAndVerify_shouldAcceptJsShape_withEmptyCerthashesAndUnknownFields() {
    // js-libp2p-noise always sends extensions; a future field must not break us.
    final byte[] payload =
        NoiseProtos.NoiseHandshakePayload.newBuilder()
            .setIdentityKey(ByteString.copyFrom(identity.publicKey().marshal()))
            .setIdentitySig(
                ByteString.copyFrom(identity.sign(HandshakePayload.signedData(staticKey))))
            .setExtensions(NoiseProtos.NoiseExtensions.newBuilder())
            .build()
            .toByteArray();
    final byte[] withUnknownField = new byte[payload.length + 3];
    System.arraycopy(payload, 0, withUnknownField, 0, payload.length);
    withUnknownField[payload.length] = (byte) 0x2a; // field 5, length-delimited
    withUnknownField[payload.length + 1] = 1;
    withUnknownField[payload.length + 2] = 7;
    assertThat(HandshakePayload.decodeAndVerify(withUnknownField, staticKey).streamMuxers())
        .isEmpty();
  }

  @Test
  void decodeAndVerify_shouldAcceptSecp256k1Identity() {
    final PrivateKey secp = Keys.generate(KeyType.SECP256K1, RANDOM);
    assertThat(
            HandshakePayload.decodeAndVerify(
                    HandshakePayload.encode(secp, staticKey, List.of()), staticKey)
                .peerId())
        .isEqualTo(secp.publicKey().peerId());
  }

  @Test
  void decodeAndVerify_shouldReject_whenSignatureIsOverAnotherStaticKey() {
    final byte[] payload = HandshakePayload.encode(identity, staticKey, List.of());
    final byte[] otherStatic = X25519KeyPair.generate(RANDOM).publicKey();
    assertThatThrownBy(() -> HandshakePayload.decodeAndVerify(payload, otherStatic))
        .isExactlyInstanceOf(ProtocolViolationException.class)
        .hasMessageContaining("signature");
  }

  @Test
  void decodeAndVerify_shouldReject_whenFieldsAreMissingOrKeysUnsupported() {
    final ByteString sig = ByteString.copyFrom(new byte[64]);
    final ByteString key = ByteString.copyFrom(identity.publicKey().marshal());
    final ByteString rsaKey = ByteString.copyFrom(HEX.parseHex("080012020102"));
    final List<NoiseProtos.NoiseHandshakePayload> bad =
        List.of(
            NoiseProtos.NoiseHandshakePayload.newBuilder().setIdentitySig(sig).build(),
            NoiseProtos.NoiseHandshakePayload.newBuilder().setIdentityKey(key).build(),
            NoiseProtos.NoiseHandshakePayload.newBuilder()
                .setIdentityKey(ByteString.EMPTY)
                .setIdentitySig(sig)
                .build(),
            NoiseProtos.NoiseHandshakePayload.newBuilder()
                .setIdentityKey(rsaKey)
                .setIdentitySig(sig)
                .build());
    for (final NoiseProtos.NoiseHandshakePayload payload : bad) {
      assertThatThrownBy(() -> HandshakePayload.decodeAndVerify(payload.toByteArray(), staticKey))
          .isExactlyInstanceOf(ProtocolViolationException.class);
    }
  }

  @Test
  void decodeAndVerify_shouldReject_whenMuxerListIsAbsurdlyLong() {
    final byte[] payload =
        HandshakePayload.encode(
            identity, staticKey, Collections.nCopies(NoiseConfig.MAX_STREAM_MUXERS + 1, "/x"));
    assertThatThrownBy(() -> HandshakePayload.decodeAndVerify(payload, staticKey))
        .isExactlyInstanceOf(ProtocolViolationException.class)
        .hasMessageContaining("stream muxers");
  }

  @Test
  void selectEarlyMuxer_shouldFollowInitiatorPreference_whenBothListsAreNonEmpty() {
    assertThat(
            HandshakePayload.selectEarlyMuxer(
                List.of("/yamux/1.0.0", "/mplex/6.7.0"), List.of("/mplex/6.7.0", "/yamux/1.0.0")))
        .contains("/yamux/1.0.0");
    assertThat(HandshakePayload.selectEarlyMuxer(List.of("/a", "/b"), List.of("/b")))
        .contains("/b");
  }

  @Test
  void selectEarlyMuxer_shouldBeEmpty_whenEitherListIsEmpty() {
    assertThat(HandshakePayload.selectEarlyMuxer(List.of(), List.of("/yamux/1.0.0"))).isEmpty();
    assertThat(HandshakePayload.selectEarlyMuxer(List.of("/yamux/1.0.0"), List.of())).isEmpty();
  }

  @Test
  void selectEarlyMuxer_shouldFail_whenListsHaveNothingInCommon() {
    assertThatThrownBy(() -> HandshakePayload.selectEarlyMuxer(List.of("/a"), List.of("/b")))
        .isExactlyInstanceOf(BadPeerException.class);
  }
}
