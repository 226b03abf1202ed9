package io.relaypinner.libp2p.security.noise;

import io.relaypinner.libp2p.core.ProtocolViolationException;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * A Noise {@code HandshakeState} (Noise Protocol Framework rev 34, §5.3) for the one pattern libp2p
 * uses, {@code XX} (§7.5), with protocol name {@value #PROTOCOL_NAME}:
 *
 * <pre>
 *   -&gt; e
 *   &lt;- e, ee, s, es
 *   -&gt; s, se
 * </pre>
 *
 * <p>No Netty types: messages and payloads are byte arrays (handshake messages are small). The
 * ephemeral key comes from a supplier so test vectors can fix it. Each message carries a payload
 * (empty is allowed); after the third message {@link #split()} yields the transport ciphers. Not
 * thread-safe.
 */
final class HandshakeState {
  static final String PROTOCOL_NAME = "Noise_XX_25519_ChaChaPoly_SHA256";

  /** Handshake messages in the XX pattern. */
  static final int MESSAGE_COUNT = 3;

  private enum Token {
    E,
    S,
    EE,
    ES,
    SE
  }

  private static final List<List<Token>> XX =
      List.of(
          List.of(Token.E),
          List.of(Token.E, Token.EE, Token.S, Token.ES),
          List.of(Token.S, Token.SE));

  private final boolean initiator;
  private final SymmetricState ss;
  private final X25519KeyPair s;
  private final Supplier<X25519KeyPair> ephemeralKeys;
  private X25519KeyPair e;
  private byte[] re;
  private byte[] rs;
  private int messageIndex;

  /**
   * {@code Initialize(XX, initiator, prologue, s)}.
   *
   * @param staticKey our Noise static key pair (not the libp2p identity key)
   * @param ephemeralKeys called once, when the {@code e} token is written
   */
  HandshakeState(
      final boolean initiator,
      final byte[] prologue,
      final X25519KeyPair staticKey,
      final Supplier<X25519KeyPair> ephemeralKeys) {
    this.initiator = initiator;
    this.s = Objects.requireNonNull(staticKey, "staticKey");
    this.ephemeralKeys = Objects.requireNonNull(ephemeralKeys, "ephemeralKeys");
    this.ss = new SymmetricState(PROTOCOL_NAME);
    ss.mixHash(prologue);
  }

  boolean isInitiator() {
    return initiator;
  }

  /** Whether the next message is ours to write (otherwise it is the remote's, to read). */
  boolean isMyTurn() {
    return !isComplete() && (messageIndex % 2 == 0) == initiator;
  }

  boolean isComplete() {
    return messageIndex == MESSAGE_COUNT;
  }

  /** The 1-based number of the next message (1 to 3), or 4 once complete. */
  int nextMessageNumber() {
    return messageIndex + 1;
  }

  /** {@code WriteMessage(payload)}: returns the handshake message. */
  byte[] writeMessage(final byte[] payload) {
    if (!isMyTurn()) {
      throw new IllegalStateException("not our turn to write message " + nextMessageNumber());
    }
    final byte[][] parts = new byte[XX.get(messageIndex).size() + 1][];
    int i = 0;
    for (final Token token : XX.get(messageIndex)) {
      switch (token) {
        case E -> {
          e = ephemeralKeys.get();
          final byte[] publicKey = e.publicKey();
          ss.mixHash(publicKey);
          parts[i++] = publicKey;
        }
        case S -> parts[i++] = ss.encryptAndHash(s.publicKey());
        default -> mixDh(token);
      }
    }
    parts[i++] = ss.encryptAndHash(payload);
    messageIndex++;
    return concat(parts, i);
  }

  /**
   * {@code ReadMessage(message)}: returns the payload.
   *
   * @throws ProtocolViolationException when the message is too short, fails authentication, or
   *     carries a low-order X25519 key
   */
  byte[] readMessage(final byte[] message) {
    if (isComplete() || isMyTurn()) {
      throw new IllegalStateException("not our turn to read message " + nextMessageNumber());
    }
    final int number = nextMessageNumber();
    int offset = 0;
    for (final Token token : XX.get(messageIndex)) {
      switch (token) {
        case E -> {
          re = take(message, offset, X25519KeyPair.KEY_LENGTH, number);
          offset += X25519KeyPair.KEY_LENGTH;
          ss.mixHash(re);
        }
        case S -> {
          final int length = X25519KeyPair.KEY_LENGTH + (ss.hasKey() ? CipherState.TAG_LENGTH : 0);
          rs = ss.decryptAndHash(take(message, offset, length, number));
          offset += length;
        }
        default -> mixDh(token);
      }
    }
    final byte[] rest = Arrays.copyOfRange(message, offset, message.length);
    if (ss.hasKey() && rest.length < CipherState.TAG_LENGTH) {
      throw new ProtocolViolationException(
          "Noise handshake message " + number + " of " + message.length + " bytes is truncated");
    }
    final byte[] payload = ss.decryptAndHash(rest);
    messageIndex++;
    return payload;
  }

  /** The remote's static Noise key, known after message 2 (initiator) or 3 (responder). */
  byte[] remoteStaticKey() {
    if (rs == null) {
      throw new IllegalStateException("remote static key not received yet");
    }
    return rs.clone();
  }

  /** The handshake hash {@code h}; after the last message both sides hold the same value. */
  byte[] handshakeHash() {
    return ss.handshakeHash();
  }

  /** {@code Split()}, oriented for this side. */
  TransportCiphers split() {
    if (!isComplete()) {
      throw new IllegalStateException("handshake not complete");
    }
    final CipherState[] pair = ss.split();
    return initiator
        ? new TransportCiphers(pair[0], pair[1])
        : new TransportCiphers(pair[1], pair[0]);
  }

  private void mixDh(final Token token) {
    // es = DH(initiator e, responder s); se = DH(initiator s, responder e).
    final byte[] shared =
        switch (token) {
          case EE -> e.dh(re);
          case ES -> initiator ? e.dh(rs) : s.dh(re);
          case SE -> initiator ? s.dh(re) : e.dh(rs);
          default -> throw new IllegalArgumentException("not a DH token: " + token);
        };
    ss.mixKey(shared);
    Arrays.fill(shared, (byte) 0);
  }

  private static byte[] take(
      final byte[] message, final int offset, final int length, final int number) {
    if (message.length - offset < length) {
      throw new ProtocolViolationException(
          "Noise handshake message " + number + " of " + message.length + " bytes is truncated");
    }
    return Arrays.copyOfRange(message, offset, offset + length);
  }

  private static byte[] concat(final byte[][] parts, final int count) {
    int length = 0;
    for (int i = 0; i < count; i++) {
      length += parts[i].length;
    }
    final byte[] out = new byte[length];
    int offset = 0;
    for (int i = 0; i < count; i++) {
      System.arraycopy(parts[i], 0, out, offset, parts[i].length);
      offset += parts[i].length;
    }
    return out;
  }
}
