package io.relaypinner.libp2p.pubsub;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.relaypinner.libp2p.netty.UvarintFrameEncoder;
import io.relaypinner.libp2p.pubsub.pb.PubsubProtos.RPC;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class RpcInboundHandlerTest {
  private final List<RPC> delivered = new ArrayList<>();

  private EmbeddedChannel channel(final int maxRpcSize) {
    final EmbeddedChannel channel = new EmbeddedChannel();
    GossipsubProtocol.installInbound(channel, maxRpcSize, delivered::add);
    return channel;
  }

  private static ByteBuf framed(final byte[] body) {
    final EmbeddedChannel encoder = new EmbeddedChannel(UvarintFrameEncoder.INSTANCE);
    encoder.writeOutbound(Unpooled.wrappedBuffer(body));
    final ByteBuf out = Unpooled.buffer();
    for (ByteBuf part = encoder.readOutbound(); part != null; part = encoder.readOutbound()) {
      out.writeBytes(part);
      part.release();
    }
    return out;
  }

  private static RPC sub(final String topic) {
    return RPC.newBuilder().addSubscriptions(RPC.SubOpts.newBuilder().setSubscribe(true)
        .setTopic(topic)).build();
  }

  @Test
  void read_shouldDeliverEveryRpc_whenSeveralArriveInOneBuffer() {
    final EmbeddedChannel channel = channel(1024);
    final ByteBuf both = Unpooled.wrappedBuffer(framed(sub("a").toByteArray()),
        framed(sub("b").toByteArray()));
    channel.writeInbound(both);
    assertThat(delivered).containsExactly(sub("a"), sub("b"));
    assertThat(channel.isOpen()).isTrue();
  }

  @Test
  void read_shouldCloseTheStream_whenFrameOverTheLimit() {
    final EmbeddedChannel channel = channel(16);
    channel.writeInbound(framed(new byte[17]));
    assertThat(delivered).isEmpty();
    assertThat(channel.isOpen()).isFalse();
  }

  @Test
  void read_shouldCloseTheStream_whenFrameIsNotAnRpc() {
    final EmbeddedChannel channel = channel(1024);
    channel.writeInbound(framed(new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff}));
    assertThat(delivered).isEmpty();
    assertThat(channel.isOpen()).isFalse();
  }

  @Test
  void remoteFin_shouldCloseTheStream() {
    final EmbeddedChannel channel = channel(1024);
    channel.pipeline().fireUserEventTriggered(ChannelInputShutdownEvent.INSTANCE);
    assertThat(channel.isOpen()).isFalse();
  }
}
