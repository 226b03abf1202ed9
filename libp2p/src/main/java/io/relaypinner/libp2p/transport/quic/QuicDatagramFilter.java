package io.relaypinner.libp2p.transport.quic;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.DatagramPacket;

/**
 * First in a QUIC listener's pipeline: drops (and reports) datagrams that cannot be QUIC v1
 * packets for this listener before the QUIC stack spends anything on them (RFC 9000 §17): the
 * fixed bit clear, a version other than 1, an Initial shorter than 1200 bytes (§14.1: a server
 * MUST discard it), a connection id longer than 20 bytes, and a short-header or Handshake packet
 * whose destination connection id is not one this listener issued ({@link SignedConnectionIds}).
 * Only the first packet of a datagram is looked at: coalesced packets share its connection.
 */
final class QuicDatagramFilter extends ChannelInboundHandlerAdapter {
  private static final int QUIC_V1 = 0x00000001;
  private static final int MIN_INITIAL = 1200;
  private static final int TYPE_INITIAL = 0;
  private static final int TYPE_ZERO_RTT = 1;
  private final SignedConnectionIds ids;
  private final Runnable dropped;

  QuicDatagramFilter(final SignedConnectionIds ids, final Runnable dropped) {
    this.ids = ids;
    this.dropped = dropped;
  }

  @Override
  public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
    if (msg instanceof DatagramPacket packet && !acceptable(packet.content())) {
      packet.release();
      dropped.run();
      return;
    }
    ctx.fireChannelRead(msg);
  }

  /** Whether {@code buf} may be a QUIC v1 packet for this listener. */
  boolean acceptable(final ByteBuf buf) {
    final int start = buf.readerIndex();
    final int length = buf.readableBytes();
    if (length < 1 + SignedConnectionIds.LENGTH) {
      return false;
    }
    final int first = buf.getUnsignedByte(start);
    if ((first & 0x40) == 0) {
      return false;
    }
    if ((first & 0x80) == 0) {
      return ids.isOurs(buf, start + 1);
    }
    if (length < 6 || buf.getInt(start + 1) != QUIC_V1) {
      return false;
    }
    final int type = (first & 0x30) >> 4;
    final int dcidLength = buf.getUnsignedByte(start + 5);
    if (dcidLength > SignedConnectionIds.LENGTH || length < 6 + dcidLength) {
      return false;
    }
    return switch (type) {
      case TYPE_INITIAL -> length >= MIN_INITIAL;
      // 0-RTT carries the client's chosen id; Handshake ours; Retry is never sent to a server.
      case TYPE_ZERO_RTT -> true;
      case 2 -> dcidLength == SignedConnectionIds.LENGTH && ids.isOurs(buf, start + 6);
      default -> false;
    };
  }
}
