package io.relaypinner.libp2p.record;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import io.relaypinner.libp2p.core.ProtocolViolationException;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.libp2p.protocol.relay.pb.CircuitProtos;
import io.relaypinner.multiformats.MultiformatException;
import io.relaypinner.multiformats.PeerId;
import java.util.Objects;

/**
 * A circuit relay v2 reservation voucher (libp2p/specs relay/circuit-v2.md, "Reservation
 * Vouchers"): the relay testifies that it will relay for {@code peer} until {@code expiration}.
 * Carried in a {@link SignedEnvelope} with domain {@value #DOMAIN} and payload type
 * {@code 0x0302}, the record type js-libp2p and go-libp2p use.
 *
 * @param relay the relay's peer id (the signer)
 * @param peer the reserving peer
 * @param expiration UNIX UTC seconds
 */
public record ReservationVoucher(PeerId relay, PeerId peer, long expiration) {
  public static final String DOMAIN = "libp2p-relay-rsvp";
  private static final byte[] PAYLOAD_TYPE = {0x03, 0x02};

  public ReservationVoucher {
    Objects.requireNonNull(relay, "relay");
    Objects.requireNonNull(peer, "peer");
  }

  /** The record type bytes {@code 0x03 0x02}. */
  public static byte[] payloadType() {
    return PAYLOAD_TYPE.clone();
  }

  /** The canonical payload: fields in id order. */
  public byte[] marshal() {
    return CircuitProtos.ReservationVoucher.newBuilder()
        .setRelay(ByteString.copyFrom(relay.bytes()))
        .setPeer(ByteString.copyFrom(peer.bytes()))
        .setExpiration(expiration)
        .build().toByteArray();
  }

  /** The voucher signed by the relay's key, as envelope bytes. */
  public byte[] seal(final PrivateKey relayKey) {
    return SignedEnvelope.seal(relayKey, DOMAIN, PAYLOAD_TYPE, marshal()).marshal();
  }

  /**
   * Opens a voucher envelope: signature for {@value #DOMAIN}, payload type, payload fields, and
   * that the signer is the voucher's relay.
   *
   * @throws ProtocolViolationException when anything is malformed or inconsistent
   * @throws io.relaypinner.libp2p.core.BadPeerException when the signature is bad
   */
  public static ReservationVoucher open(final byte[] envelopeBytes) {
    final SignedEnvelope envelope = SignedEnvelope.open(envelopeBytes, DOMAIN, PAYLOAD_TYPE);
    final CircuitProtos.ReservationVoucher pb;
    final ReservationVoucher voucher;
    try {
      pb = CircuitProtos.ReservationVoucher.parseFrom(envelope.payload());
      if (!pb.hasRelay() || !pb.hasPeer() || !pb.hasExpiration()) {
        throw new ProtocolViolationException("voucher lacks a required field");
      }
      voucher = new ReservationVoucher(PeerId.fromBytes(pb.getRelay().toByteArray()),
          PeerId.fromBytes(pb.getPeer().toByteArray()), pb.getExpiration());
    } catch (final InvalidProtocolBufferException | MultiformatException e) {
      throw new ProtocolViolationException("malformed voucher: " + e.getMessage(), e);
    }
    if (!voucher.relay().equals(envelope.publicKey().peerId())) {
      throw new ProtocolViolationException("voucher signed by " + envelope.publicKey().peerId()
          + ", not by its relay " + voucher.relay());
    }
    return voucher;
  }
}
