package io.relaypinner.libp2p.security.noise;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relaypinner.libp2p.core.ProtocolViolationException;
import java.security.SecureRandom;
import org.junit.jupiter.api.Test;

class HandshakeStateTest {
  private static final SecureRandom RANDOM = new SecureRandom();

  private static HandshakeState state(final boolean initiator, final byte[] prologue) {
    return new HandshakeState(
        initiator, prologue, X25519KeyPair.generate(RANDOM), () -> X25519KeyPair.generate(RANDOM));
  }

  @Test
  void writeMessage_shouldRefuse_whenItIsTheRemotesTurn() {
    final HandshakeState responder = state(false, new byte[0]);
    assertThat(responder.isMyTurn()).isFalse();
    assertThatThrownBy(() -> responder.writeMessage(new byte[0]))
        .isInstanceOf(IllegalStateException.class);
    final HandshakeState initiator = state(true, new byte[0]);
    assertThatThrownBy(() -> initiator.readMessage(new byte[32]))
        .isInstanceOf(IllegalStateException.class);
  }

  @Test
  void handshake_shouldFailAuthentication_whenProloguesDiffer() {
    final HandshakeState initiator = state(true, "a".getBytes());
    final HandshakeState responder = state(false, "b".getBytes());
    responder.readMessage(initiator.writeMessage(new byte[0]));
    final byte[] message2 = responder.writeMessage(new byte[0]);
    assertThatThrownBy(() -> initiator.readMessage(message2))
        .isExactlyInstanceOf(ProtocolViolationException.class);
  }

  @Test
  void split_shouldPairInitiatorSendWithResponderReceive() {
    final HandshakeState initiator = state(true, new byte[0]);
    final HandshakeState responder = state(false, new byte[0]);
    responder.readMessage(initiator.writeMessage(new byte[0]));
    initiator.readMessage(responder.writeMessage(new byte[0]));
    responder.readMessage(initiator.writeMessage(new byte[0]));
    assertThat(initiator.isComplete()).isTrue();
    assertThat(responder.isComplete()).isTrue();
    final TransportCiphers i = initiator.split();
    final TransportCiphers r = responder.split();
    final byte[] c = i.send().encryptWithAd(new byte[0], "to responder".getBytes());
    assertThat(r.receive().decryptWithAd(new byte[0], c)).isEqualTo("to responder".getBytes());
    final byte[] d = r.send().encryptWithAd(new byte[0], "to initiator".getBytes());
    assertThat(i.receive().decryptWithAd(new byte[0], d)).isEqualTo("to initiator".getBytes());
    assertThatThrownBy(() -> r.receive().decryptWithAd(new byte[0], d))
        .isExactlyInstanceOf(ProtocolViolationException.class);
  }

  @Test
  void readMessage_shouldReturnPlaintextPayload_whenMessage1CarriesOne() {
    // Message 1 payloads are plaintext (no key yet); the handler ignores them, as JS does.
    final HandshakeState initiator = state(true, new byte[0]);
    final HandshakeState responder = state(false, new byte[0]);
    final byte[] message1 = initiator.writeMessage("early".getBytes());
    assertThat(message1).hasSize(32 + 5);
    assertThat(responder.readMessage(message1)).isEqualTo("early".getBytes());
  }
}
