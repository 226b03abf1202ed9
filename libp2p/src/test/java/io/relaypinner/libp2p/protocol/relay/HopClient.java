package io.relaypinner.libp2p.protocol.relay;

import com.google.protobuf.ByteString;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.relaypinner.libp2p.host.Connection;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.RawExchange;
import io.relaypinner.libp2p.protocol.relay.pb.CircuitProtos.HopMessage;
import io.relaypinner.libp2p.protocol.relay.pb.CircuitProtos.Peer;
import io.relaypinner.libp2p.protocol.relay.pb.CircuitProtos.Status;
import io.relaypinner.libp2p.protocol.relay.pb.CircuitProtos.StopMessage;
import io.relaypinner.multiformats.PeerId;
import io.relaypinner.multiformats.Uvarint;
import java.io.ByteArrayOutputStream;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The client side of circuit relay v2 as attack tests speak it: a reservation, a circuit that
 * stays open, and a destination that accepts every circuit. Shared by the in-process attack on
 * a {@link CircuitRelay} ({@code CircuitRelayPerIpIT}) and the one against the launcher's relay
 * JVM (cli's {@code Libp2pAttackIT}).
 */
public final class HopClient {
  private HopClient() {}

  /** Sends RESERVE on a new hop stream of {@code connection}; the relay's status. */
  public static Status reserve(final Connection connection) throws Exception {
    return HopMessage.parseFrom(RawExchange.unframed(RawExchange.exchange(connection,
        CircuitRelay.HOP_PROTOCOL_ID, RawExchange.framed(HopMessage.newBuilder()
            .setType(HopMessage.Type.RESERVE).build().toByteArray())))).getStatus();
  }

  /**
   * Sends CONNECT to {@code destination} on a new hop stream of {@code connection} and returns
   * the relay's status; the stream stays open (an admitted circuit stays open with it).
   */
  public static Status connect(final Connection connection, final PeerId destination)
      throws Exception {
    final CompletableFuture<HopMessage> answer = new CompletableFuture<>();
    final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    connection.newStream(List.of(CircuitRelay.HOP_PROTOCOL_ID), (channel, p) ->
        channel.pipeline().addLast(new ChannelInboundHandlerAdapter() {
          @Override
          public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
            final ByteBuf buf = (ByteBuf) msg;
            final byte[] copy = new byte[buf.readableBytes()];
            buf.readBytes(copy);
            buf.release();
            if (answer.isDone()) {
              return;
            }
            bytes.writeBytes(copy);
            final byte[] all = bytes.toByteArray();
            final long length = Uvarint.decode(all).value();
            if (all.length >= Uvarint.size(length) + length) {
              try {
                answer.complete(HopMessage.parseFrom(RawExchange.unframed(all)));
              } catch (final Exception e) {
                answer.completeExceptionally(e);
              }
            }
          }

          @Override
          public void channelInactive(final ChannelHandlerContext ctx) {
            answer.completeExceptionally(new IllegalStateException("hop stream closed"));
          }
        })).get(5, TimeUnit.SECONDS).channel().writeAndFlush(Unpooled.wrappedBuffer(
            RawExchange.framed(HopMessage.newBuilder().setType(HopMessage.Type.CONNECT)
                .setPeer(Peer.newBuilder().setId(ByteString.copyFrom(destination.bytes())))
                .build().toByteArray())));
    return answer.get(20, TimeUnit.SECONDS).getStatus();
  }

  /** Registers a stop handler on {@code host} that accepts every circuit and keeps it open. */
  public static void acceptCircuits(final Host host) {
    host.protocols().register(CircuitRelay.STOP_PROTOCOL_ID, (stream, protocol) ->
        stream.pipeline().addLast(new ChannelInboundHandlerAdapter() {
          private boolean answered;

          @Override
          public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
            ((ByteBuf) msg).release();
            if (!answered) {
              answered = true;
              ctx.writeAndFlush(Unpooled.wrappedBuffer(RawExchange.framed(StopMessage
                  .newBuilder().setType(StopMessage.Type.STATUS).setStatus(Status.OK).build()
                  .toByteArray())));
            }
          }
        }));
  }
}
