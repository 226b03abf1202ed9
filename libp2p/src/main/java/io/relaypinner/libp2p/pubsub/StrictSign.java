package io.relaypinner.libp2p.pubsub;

import com.google.protobuf.ByteString;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.libp2p.crypto.PublicKey;
import io.relaypinner.libp2p.pubsub.pb.PubsubProtos.Message;
import io.relaypinner.multiformats.PeerId;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * The {@code StrictSign} message signature policy of libp2p/specs pubsub/README.md "Message
 * Signing", the js-libp2p default: every message carries {@code from}, an 8-byte {@code seqno}, a
 * {@code signature} over {@code "libp2p-pubsub:" || protobuf(Message with fields 1..4)} and, as JS
 * always sets it, the author's {@code key}.
 */
public final class StrictSign {
  private static final byte[] PREFIX = "libp2p-pubsub:".getBytes(StandardCharsets.US_ASCII);
  /** JS rejects any other seqno length ({@code ValidateError.InvalidSeqno}). */
  public static final int SEQNO_LENGTH = 8;

  /** Why a received message failed validation; the names are the counter keys. */
  public enum Invalid {
    MISSING_TOPIC, INVALID_SEQNO, MISSING_SIGNATURE, INVALID_FROM, KEY_MISMATCH,
    BAD_SIGNATURE
  }

  /** A message that passed validation: its author key and id. */
  public record Valid(PeerId author, PublicKey key, MessageId id) {}

  private StrictSign() {}

  /** Builds and signs a message; {@code seqno} becomes 8 bytes big-endian. */
  public static Message sign(final PrivateKey key, final String topic, final byte[] data,
      final long seqno) {
    final byte[] seq = new byte[SEQNO_LENGTH];
    for (int i = 0; i < SEQNO_LENGTH; i++) {
      seq[i] = (byte) (seqno >>> (8 * (SEQNO_LENGTH - 1 - i)));
    }
    final Message unsigned = Message.newBuilder()
        .setFrom(ByteString.copyFrom(key.publicKey().peerId().bytes()))
        .setData(ByteString.copyFrom(data))
        .setSeqno(ByteString.copyFrom(seq))
        .setTopic(topic)
        .build();
    return unsigned.toBuilder()
        .setSignature(ByteString.copyFrom(key.sign(signedBytes(unsigned))))
        .setKey(ByteString.copyFrom(key.publicKey().marshal()))
        .build();
  }

  /**
   * Validates a received message.
   *
   * @return the author and id, or the reason it is invalid
   */
  public static Result validate(final Message message) {
    if (!message.hasTopic()) {
      return new Result(null, Invalid.MISSING_TOPIC);
    }
    if (!message.hasSeqno() || message.getSeqno().size() != SEQNO_LENGTH) {
      return new Result(null, Invalid.INVALID_SEQNO);
    }
    if (!message.hasSignature()) {
      return new Result(null, Invalid.MISSING_SIGNATURE);
    }
    if (!message.hasFrom()) {
      return new Result(null, Invalid.INVALID_FROM);
    }
    final PeerId author;
    final PublicKey key;
    try {
      author = PeerId.fromBytes(message.getFrom().toByteArray());
      final Optional<byte[]> inlined = author.publicKeyBytes();
      if (message.hasKey()) {
        key = Keys.unmarshalPublicKey(message.getKey().toByteArray());
        // Stricter than JS, which skips this check for hashed (RSA) ids: the key must be from's.
        if (!key.peerId().equals(author)) {
          return new Result(null, Invalid.KEY_MISMATCH);
        }
      } else if (inlined.isPresent()) {
        key = Keys.unmarshalPublicKey(inlined.get());
      } else {
        return new Result(null, Invalid.INVALID_FROM);
      }
    } catch (final RuntimeException e) {
      // Malformed multihash or key bytes: the remote's fault, reported as a reason, not thrown.
      return new Result(null, Invalid.INVALID_FROM);
    }
    // Only fields 1..4, as JS re-encodes them: unknown fields are not part of what was signed.
    final Message.Builder unsigned = Message.newBuilder().setFrom(message.getFrom())
        .setSeqno(message.getSeqno()).setTopic(message.getTopic());
    if (message.hasData()) {
      unsigned.setData(message.getData());
    }
    if (!key.verify(signedBytes(unsigned.build()), message.getSignature().toByteArray())) {
      return new Result(null, Invalid.BAD_SIGNATURE);
    }
    return new Result(new Valid(author, key, messageId(key, message.getSeqno().toByteArray())),
        null);
  }

  /** Either {@code valid} or {@code invalid} is set. */
  public record Result(Valid valid, Invalid invalid) {}

  /**
   * What a message claims before any signature is checked: the id it would have and its {@code
   * from} bytes, or why it is invalid. Either {@code id} or {@code invalid} is set.
   */
  public record Claim(MessageId id, byte[] from, Invalid invalid) {}

  /**
   * The cheap part of {@link #validate}: field presence, the seqno length, {@code from} parses,
   * and the message id from the key bytes as sent (or the key inlined in {@code from}), without
   * parsing the key or checking the signature. A message whose claim is valid may still fail
   * {@link #validate}; one whose claim is invalid always does, for the same reason.
   */
  public static Claim claim(final Message message) {
    if (!message.hasTopic()) {
      return new Claim(null, null, Invalid.MISSING_TOPIC);
    }
    if (!message.hasSeqno() || message.getSeqno().size() != SEQNO_LENGTH) {
      return new Claim(null, null, Invalid.INVALID_SEQNO);
    }
    if (!message.hasSignature()) {
      return new Claim(null, null, Invalid.MISSING_SIGNATURE);
    }
    if (!message.hasFrom()) {
      return new Claim(null, null, Invalid.INVALID_FROM);
    }
    final byte[] from = message.getFrom().toByteArray();
    final byte[] key;
    try {
      final PeerId author = PeerId.fromBytes(from);
      if (message.hasKey()) {
        key = message.getKey().toByteArray();
      } else {
        final Optional<byte[]> inlined = author.publicKeyBytes();
        if (inlined.isEmpty()) {
          return new Claim(null, null, Invalid.INVALID_FROM);
        }
        key = inlined.get();
      }
    } catch (final RuntimeException e) {
      return new Claim(null, null, Invalid.INVALID_FROM);
    }
    final byte[] seqno = message.getSeqno().toByteArray();
    final byte[] id = new byte[key.length + seqno.length];
    System.arraycopy(key, 0, id, 0, key.length);
    System.arraycopy(seqno, 0, id, key.length, seqno.length);
    return new Claim(new MessageId(id), from, null);
  }

  /**
   * The id js-libp2p-gossipsub's {@code msgIdFnStrictSign} computes: the author's {@code
   * PublicKey} protobuf, then the seqno (8 bytes).
   */
  public static MessageId messageId(final PublicKey author, final byte[] seqno) {
    final byte[] key = author.marshal();
    final byte[] id = new byte[key.length + seqno.length];
    System.arraycopy(key, 0, id, 0, key.length);
    System.arraycopy(seqno, 0, id, key.length, seqno.length);
    return new MessageId(id);
  }

  private static byte[] signedBytes(final Message unsigned) {
    // proto2 serializes known fields in field-number order, as the JS encoder does.
    final byte[] body = unsigned.toByteArray();
    final byte[] out = new byte[PREFIX.length + body.length];
    System.arraycopy(PREFIX, 0, out, 0, PREFIX.length);
    System.arraycopy(body, 0, out, PREFIX.length, body.length);
    return out;
  }
}
