package io.relaypinner.libp2p.record;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import io.relaypinner.libp2p.core.BadPeerException;
import io.relaypinner.libp2p.core.ProtocolViolationException;
import io.relaypinner.libp2p.crypto.KeyFormatException;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.libp2p.crypto.PublicKey;
import io.relaypinner.libp2p.record.pb.EnvelopeProtos;
import io.relaypinner.multiformats.Uvarint;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;

/**
 * A signed envelope (libp2p/specs RFC/0002-signed-envelopes.md): a payload with its type, signed
 * by a libp2p key for one domain. The signature covers {@code varint(len(domain)) || domain ||
 * varint(len(type)) || type || varint(len(payload)) || payload}, as js-libp2p
 * ({@code @libp2p/peer-record}) and go-libp2p ({@code core/record}) compute it.
 *
 * @param publicKey the signer
 * @param payloadType the multicodec of the payload, as bytes (e.g. {@code 0x03 0x02})
 * @param payload the record's bytes
 * @param signature the signer's signature over the domain-separated payload
 */
public record SignedEnvelope(PublicKey publicKey, byte[] payloadType, byte[] payload,
    byte[] signature) {

  /** An envelope bigger than this is refused before any parsing. */
  public static final int MAX_ENVELOPE_SIZE = 8 * 1024;

  public SignedEnvelope {
    Objects.requireNonNull(publicKey, "publicKey");
    payloadType = payloadType.clone();
    payload = payload.clone();
    signature = signature.clone();
  }

  /** Signs {@code payload} for {@code domain} with {@code key}. */
  public static SignedEnvelope seal(final PrivateKey key, final String domain,
      final byte[] payloadType, final byte[] payload) {
    final byte[] signature = key.sign(signedBytes(domain, payloadType, payload));
    return new SignedEnvelope(key.publicKey(), payloadType, payload, signature);
  }

  /** The envelope protobuf. */
  public byte[] marshal() {
    return EnvelopeProtos.Envelope.newBuilder()
        .setPublicKey(ByteString.copyFrom(publicKey.marshal()))
        .setPayloadType(ByteString.copyFrom(payloadType))
        .setPayload(ByteString.copyFrom(payload))
        .setSignature(ByteString.copyFrom(signature))
        .build().toByteArray();
  }

  /**
   * Parses an envelope and checks its signature for {@code domain} and its payload type. Cheap
   * checks (size, parse, type) come before the signature.
   *
   * @throws ProtocolViolationException when it is oversized or malformed or of another type
   * @throws BadPeerException when the signature does not verify
   */
  public static SignedEnvelope open(final byte[] bytes, final String domain,
      final byte[] expectedPayloadType) {
    if (bytes.length > MAX_ENVELOPE_SIZE) {
      throw new ProtocolViolationException("envelope of " + bytes.length + " bytes exceeds "
          + MAX_ENVELOPE_SIZE);
    }
    final EnvelopeProtos.Envelope pb;
    final PublicKey key;
    try {
      pb = EnvelopeProtos.Envelope.parseFrom(bytes);
      key = Keys.unmarshalPublicKey(pb.getPublicKey().toByteArray());
    } catch (final InvalidProtocolBufferException | KeyFormatException e) {
      throw new ProtocolViolationException("malformed envelope: " + e.getMessage(), e);
    }
    final byte[] type = pb.getPayloadType().toByteArray();
    if (!Arrays.equals(type, expectedPayloadType)) {
      throw new ProtocolViolationException("envelope payload type "
          + java.util.HexFormat.of().formatHex(type) + " is not the expected one");
    }
    final SignedEnvelope envelope = new SignedEnvelope(key, type, pb.getPayload().toByteArray(),
        pb.getSignature().toByteArray());
    if (!key.verify(signedBytes(domain, type, envelope.payload), envelope.signature)) {
      throw new BadPeerException("envelope signature does not verify for domain " + domain);
    }
    return envelope;
  }

  @Override
  public byte[] payload() {
    return payload.clone();
  }

  @Override
  public byte[] payloadType() {
    return payloadType.clone();
  }

  @Override
  public byte[] signature() {
    return signature.clone();
  }

  private static byte[] signedBytes(final String domain, final byte[] type,
      final byte[] payload) {
    final byte[] domainBytes = domain.getBytes(StandardCharsets.UTF_8);
    final ByteArrayOutputStream out = new ByteArrayOutputStream(
        domainBytes.length + type.length + payload.length + 3 * Uvarint.MAX_BYTES);
    for (final byte[] part : new byte[][] {domainBytes, type, payload}) {
      out.writeBytes(Uvarint.encode(part.length));
      out.writeBytes(part);
    }
    return out.toByteArray();
  }

  @Override
  public boolean equals(final Object o) {
    return o instanceof SignedEnvelope other && publicKey.equals(other.publicKey)
        && Arrays.equals(payloadType, other.payloadType) && Arrays.equals(payload, other.payload)
        && Arrays.equals(signature, other.signature);
  }

  @Override
  public int hashCode() {
    return Objects.hash(publicKey, Arrays.hashCode(payload), Arrays.hashCode(signature));
  }

  @Override
  public String toString() {
    return "SignedEnvelope[" + publicKey.peerId() + ", " + payload.length + " bytes]";
  }
}
