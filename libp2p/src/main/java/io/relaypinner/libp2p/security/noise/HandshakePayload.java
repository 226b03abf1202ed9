package io.relaypinner.libp2p.security.noise;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import io.relaypinner.libp2p.core.BadPeerException;
import io.relaypinner.libp2p.core.ProtocolViolationException;
import io.relaypinner.libp2p.crypto.KeyFormatException;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.libp2p.crypto.PublicKey;
import io.relaypinner.libp2p.security.noise.pb.NoiseProtos;
import io.relaypinner.multiformats.PeerId;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;

/**
 * The libp2p handshake payload (libp2p/specs noise/README.md, "The libp2p Handshake Payload"):
 * {@code NoiseHandshakePayload { identity_key = 1; identity_sig = 2; extensions = 4 }} where the
 * signature is the identity key's over {@code "noise-libp2p-static-key:" || Noise static key}.
 */
final class HandshakePayload {
  private static final byte[] SIGNATURE_PREFIX =
      "noise-libp2p-static-key:".getBytes(StandardCharsets.US_ASCII);

  /** What a verified payload tells us about the remote. */
  record RemoteIdentity(PublicKey publicKey, PeerId peerId, List<String> streamMuxers) {}

  private HandshakePayload() {}

  /** The bytes signed by the identity key: prefix followed by the 32-byte X25519 public key. */
  static byte[] signedData(final byte[] noiseStaticPublicKey) {
    final byte[] data = new byte[SIGNATURE_PREFIX.length + noiseStaticPublicKey.length];
    System.arraycopy(SIGNATURE_PREFIX, 0, data, 0, SIGNATURE_PREFIX.length);
    System.arraycopy(
        noiseStaticPublicKey, 0, data, SIGNATURE_PREFIX.length, noiseStaticPublicKey.length);
    return data;
  }

  /**
   * Our payload. Extensions are omitted when {@code streamMuxers} is empty: a peer then sees no
   * list and falls back to multistream-select, exactly as with an empty list.
   */
  static byte[] encode(
      final PrivateKey identity,
      final byte[] noiseStaticPublicKey,
      final List<String> streamMuxers) {
    final NoiseProtos.NoiseHandshakePayload.Builder payload =
        NoiseProtos.NoiseHandshakePayload.newBuilder()
            .setIdentityKey(ByteString.copyFrom(identity.publicKey().marshal()))
            .setIdentitySig(ByteString.copyFrom(identity.sign(signedData(noiseStaticPublicKey))));
    if (!streamMuxers.isEmpty()) {
      payload.setExtensions(
          NoiseProtos.NoiseExtensions.newBuilder().addAllStreamMuxers(streamMuxers));
    }
    return payload.build().toByteArray();
  }

  /**
   * Decodes the remote's payload and checks its signature over the remote static key it used in
   * this handshake ({@code rs}); the spec requires terminating the connection otherwise.
   *
   * @throws ProtocolViolationException when the payload is malformed, the identity key cannot be
   *     decoded (or is of a type we do not support: RSA, ECDSA), the signature does not verify, or
   *     the muxer list is absurdly long
   */
  static RemoteIdentity decodeAndVerify(final byte[] payload, final byte[] remoteStaticKey) {
    final NoiseProtos.NoiseHandshakePayload message;
    try {
      message = NoiseProtos.NoiseHandshakePayload.parseFrom(payload);
    } catch (final InvalidProtocolBufferException e) {
      throw new ProtocolViolationException(
          "malformed Noise handshake payload: " + e.getMessage(), e);
    }
    if (!message.hasIdentityKey() || message.getIdentityKey().isEmpty()) {
      throw new ProtocolViolationException("Noise handshake payload lacks identity_key");
    }
    if (!message.hasIdentitySig() || message.getIdentitySig().isEmpty()) {
      throw new ProtocolViolationException("Noise handshake payload lacks identity_sig");
    }
    final PublicKey publicKey;
    try {
      publicKey = Keys.unmarshalPublicKey(message.getIdentityKey().toByteArray());
    } catch (final KeyFormatException e) {
      throw new ProtocolViolationException(
          "Noise handshake payload identity_key is not a usable key: " + e.getMessage(), e);
    }
    if (!publicKey.verify(signedData(remoteStaticKey), message.getIdentitySig().toByteArray())) {
      throw new ProtocolViolationException(
          "Noise handshake payload signature does not match the static key of "
              + publicKey.peerId());
    }
    final List<String> muxers =
        message.hasExtensions() ? message.getExtensions().getStreamMuxersList() : List.of();
    if (muxers.size() > NoiseConfig.MAX_STREAM_MUXERS) {
      throw new ProtocolViolationException(
          "Noise handshake payload lists "
              + muxers.size()
              + " stream muxers, more than "
              + NoiseConfig.MAX_STREAM_MUXERS);
    }
    return new RemoteIdentity(publicKey, publicKey.peerId(), List.copyOf(muxers));
  }

  /**
   * Early muxer selection (connections/inlined-muxer-negotiation.md, "Multiplexer Negotiation over
   * Noise"): the first entry of the initiator's list that the responder also lists. Happens only
   * when both lists are non-empty; a peer that sent nothing (js-libp2p-noise before 16.1, or one
   * that disabled it) still expects multistream-select for the muxer.
   *
   * @throws BadPeerException when both sides sent lists with nothing in common; the spec says the
   *     handshake MUST fail, and js-libp2p-noise fails it too
   */
  static Optional<String> selectEarlyMuxer(
      final List<String> initiatorMuxers, final List<String> responderMuxers) {
    if (initiatorMuxers.isEmpty() || responderMuxers.isEmpty()) {
      return Optional.empty();
    }
    for (final String muxer : initiatorMuxers) {
      if (responderMuxers.contains(muxer)) {
        return Optional.of(muxer);
      }
    }
    throw new BadPeerException(
        "no common stream muxer: initiator offers "
            + initiatorMuxers
            + ", responder "
            + responderMuxers);
  }
}
