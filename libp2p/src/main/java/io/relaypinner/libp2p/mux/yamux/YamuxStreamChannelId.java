package io.relaypinner.libp2p.mux.yamux;

import io.netty.channel.ChannelId;

/** Channel id of a stream: the connection's id plus the stream id, as in {@code 1a2b3c4d/5}. */
record YamuxStreamChannelId(ChannelId parent, int streamId) implements ChannelId {
  private static final long serialVersionUID = 1L;

  @Override
  public String asShortText() {
    return parent.asShortText() + '/' + Integer.toUnsignedString(streamId);
  }

  @Override
  public String asLongText() {
    return parent.asLongText() + '/' + Integer.toUnsignedString(streamId);
  }

  @Override
  public int compareTo(final ChannelId o) {
    if (o instanceof YamuxStreamChannelId other) {
      final int byParent = parent.compareTo(other.parent);
      return byParent != 0 ? byParent : Integer.compareUnsigned(streamId, other.streamId);
    }
    return asLongText().compareTo(o.asLongText());
  }

  @Override
  public String toString() {
    return asShortText();
  }
}
