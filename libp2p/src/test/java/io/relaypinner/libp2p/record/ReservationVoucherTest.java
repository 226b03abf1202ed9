package io.relaypinner.libp2p.record;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relaypinner.libp2p.core.BadPeerException;
import io.relaypinner.libp2p.core.ProtocolViolationException;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.multiformats.PeerId;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

class ReservationVoucherTest {
  private static final SecureRandom RANDOM = new SecureRandom();
  private final PrivateKey relayKey = Keys.generate(KeyType.ED25519, RANDOM);
  private final PeerId relay = relayKey.publicKey().peerId();
  private final PeerId peer = Keys.generate(KeyType.ED25519, RANDOM).publicKey().peerId();

  @Test
  void seal_shouldOpenToTheSameVoucher() {
    final ReservationVoucher voucher = new ReservationVoucher(relay, peer, 1_800_000_000L);
    assertThat(ReservationVoucher.open(voucher.seal(relayKey))).isEqualTo(voucher);
  }

  @Test
  void signature_shouldCoverTheDomainTypeAndPayload_asRfc0002Says() {
    final byte[] payload = new ReservationVoucher(relay, peer, 1L).marshal();
    final SignedEnvelope envelope = SignedEnvelope.seal(relayKey, "libp2p-relay-rsvp",
        new byte[] {0x03, 0x02}, payload);
    // varint(17) "libp2p-relay-rsvp" varint(2) 0x0302 varint(len) payload
    final HexFormat hex = HexFormat.of();
    final byte[] signed = hex.parseHex("11"
        + hex.formatHex("libp2p-relay-rsvp".getBytes(StandardCharsets.US_ASCII))
        + "020302" + String.format("%02x", payload.length) + hex.formatHex(payload));
    assertThat(relayKey.publicKey().verify(signed, envelope.signature())).isTrue();
  }

  @Test
  void open_shouldRefuseATamperedPayload() {
    final byte[] sealed = new ReservationVoucher(relay, peer, 5L).seal(relayKey);
    sealed[sealed.length - 70] ^= 1;
    assertThatThrownBy(() -> ReservationVoucher.open(sealed))
        .isInstanceOf(BadPeerException.class);
  }

  @Test
  void open_shouldRefuseAnotherDomainOrType() {
    final byte[] payload = new ReservationVoucher(relay, peer, 5L).marshal();
    final byte[] otherDomain = SignedEnvelope.seal(relayKey, "libp2p-peer-record",
        ReservationVoucher.payloadType(), payload).marshal();
    assertThatThrownBy(() -> ReservationVoucher.open(otherDomain))
        .isInstanceOf(BadPeerException.class);
    final byte[] otherType = SignedEnvelope.seal(relayKey, ReservationVoucher.DOMAIN,
        new byte[] {0x03, 0x01}, payload).marshal();
    assertThatThrownBy(() -> ReservationVoucher.open(otherType))
        .isInstanceOf(ProtocolViolationException.class).hasMessageContaining("payload type");
  }

  @Test
  void open_shouldRefuseAVoucherSignedByAnotherKeyThanItsRelay() {
    final PrivateKey other = Keys.generate(KeyType.ED25519, RANDOM);
    final byte[] sealed = new ReservationVoucher(relay, peer, 5L).seal(other);
    assertThatThrownBy(() -> ReservationVoucher.open(sealed))
        .isInstanceOf(ProtocolViolationException.class).hasMessageContaining("not by its relay");
  }

  @Test
  void open_shouldRefuseOversizedOrMalformedEnvelopes() {
    assertThatThrownBy(() -> ReservationVoucher.open(new byte[SignedEnvelope.MAX_ENVELOPE_SIZE
        + 1])).isInstanceOf(ProtocolViolationException.class);
    assertThatThrownBy(() -> ReservationVoucher.open(new byte[] {0x0a, 0x7f, 0x01}))
        .isInstanceOf(ProtocolViolationException.class);
  }
}
