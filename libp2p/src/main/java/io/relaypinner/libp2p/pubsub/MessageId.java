package io.relaypinner.libp2p.pubsub;

import java.util.Arrays;
import java.util.Base64;

/**
 * A gossipsub message id (libp2p/specs pubsub/README.md "Message Identification"), compared by
 * content. Under StrictSign js-libp2p-gossipsub ({@code msgIdFnStrictSign}) computes it as the
 * author's {@code PublicKey} protobuf followed by the 8-byte seqno; see
 * {@link StrictSign#messageId}.
 */
public final class MessageId {
  private final byte[] bytes;
  private final int hash;

  public MessageId(final byte[] bytes) {
    this.bytes = bytes.clone();
    this.hash = Arrays.hashCode(this.bytes);
  }

  /** A copy of the id bytes, as they go on the wire in IHAVE/IWANT/IDONTWANT. */
  public byte[] bytes() {
    return bytes.clone();
  }

  int length() {
    return bytes.length;
  }

  @Override
  public boolean equals(final Object o) {
    return o instanceof MessageId other && Arrays.equals(bytes, other.bytes);
  }

  @Override
  public int hashCode() {
    return hash;
  }

  /** Base64, as JS stringifies ids. */
  @Override
  public String toString() {
    return Base64.getEncoder().encodeToString(bytes);
  }
}
