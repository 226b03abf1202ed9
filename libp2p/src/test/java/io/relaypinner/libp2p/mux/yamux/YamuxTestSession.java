package io.relaypinner.libp2p.mux.yamux;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.embedded.EmbeddedChannel;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * A yamux session on an {@link EmbeddedChannel}, fed the exact frames a js-libp2p peer sends, with
 * a recorder in every stream's pipeline and every frame the session writes parsed back.
 */
final class YamuxTestSession {
  /** Keep-alive off, so no PING shows up among the frames under test. */
  static final YamuxConfig QUIET = YamuxConfig.builder().keepAliveInterval(Duration.ZERO).build();

  /** One frame the session wrote: header plus payload for DATA. */
  record Sent(YamuxFrame header, byte[] payload) {
    static Sent of(final YamuxFrame header) {
      return new Sent(header, new byte[0]);
    }

    @Override
    public boolean equals(final Object o) {
      return o instanceof Sent s && s.header.equals(header) && Arrays.equals(s.payload, payload);
    }

    @Override
    public int hashCode() {
      return header.hashCode();
    }

    @Override
    public String toString() {
      return header + (payload.length > 0 ? " +" + payload.length + "B" : "");
    }
  }

  /** Records what a stream pipeline sees. */
  static final class Recorder extends ChannelInboundHandlerAdapter {
    final ByteArrayOutputStream data = new ByteArrayOutputStream();
    final List<Object> events = new ArrayList<>();
    int reads;
    int readCompletes;
    boolean inactive;
    Throwable error;

    @Override
    public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
      final ByteBuf buf = (ByteBuf) msg;
      try {
        final byte[] bytes = new byte[buf.readableBytes()];
        buf.readBytes(bytes);
        data.writeBytes(bytes);
        reads++;
      } finally {
        buf.release();
      }
    }

    @Override
    public void channelReadComplete(final ChannelHandlerContext ctx) {
      readCompletes++;
      ctx.fireChannelReadComplete();
    }

    @Override
    public void userEventTriggered(final ChannelHandlerContext ctx, final Object evt) {
      events.add(evt);
    }

    @Override
    public void channelInactive(final ChannelHandlerContext ctx) {
      inactive = true;
    }

    @Override
    public void exceptionCaught(final ChannelHandlerContext ctx, final Throwable cause) {
      error = cause;
    }

    /** A recorder that may sit in several pipelines (only for initializer arguments). */
    @ChannelHandler.Sharable
    static final class Sharable extends ChannelInboundHandlerAdapter {}

    String text() {
      return data.toString(StandardCharsets.UTF_8);
    }
  }

  final EmbeddedChannel conn = new EmbeddedChannel();
  final YamuxHandler yamux;
  final List<YamuxStreamChannel> inbound = new ArrayList<>();
  final Map<Channel, Recorder> recorders = new HashMap<>();
  final List<String> events = new ArrayList<>();
  final List<Throwable> failures = new ArrayList<>();

  YamuxTestSession(final boolean dialer) {
    this(dialer, QUIET, ch -> {});
  }

  YamuxTestSession(final boolean dialer, final YamuxConfig config) {
    this(dialer, config, ch -> {});
  }

  YamuxTestSession(
      final boolean dialer, final YamuxConfig config, final Consumer<Channel> inboundSetup) {
    conn.freezeTime();
    final ChannelInitializer<Channel> init =
        new ChannelInitializer<>() {
          @Override
          protected void initChannel(final Channel ch) {
            inbound.add((YamuxStreamChannel) ch);
            ch.pipeline().addLast(recorder(ch));
            inboundSetup.accept(ch);
          }
        };
    final YamuxSessionListener listener =
        new YamuxSessionListener() {
          @Override
          public void streamOpened(final YamuxStreamChannel stream) {
            events.add("opened " + stream.streamId());
          }

          @Override
          public void streamClosed(final YamuxStreamChannel stream) {
            events.add("closed " + stream.streamId() + " " + stream.termination().orElseThrow());
          }

          @Override
          public void inboundStreamRejected(final long streamId) {
            events.add("rejected " + streamId);
          }

          @Override
          public void goAwayReceived(final long code) {
            events.add("goaway " + code);
          }

          @Override
          public void sessionFailed(final Throwable cause) {
            failures.add(cause);
          }
        };
    yamux = new YamuxHandler(config, dialer, init, listener);
    conn.pipeline().addLast("yamux", yamux);
  }

  /** A fresh recorder registered for {@code ch}. */
  Recorder recorder(final Channel ch) {
    final Recorder r = new Recorder();
    recorders.put(ch, r);
    return r;
  }

  Recorder recorderOf(final Channel ch) {
    return recorders.get(ch);
  }

  /** Opens an outbound stream with a recorder and returns it (synchronous on EmbeddedChannel). */
  YamuxStreamChannel open() {
    return open(ch -> {});
  }

  YamuxStreamChannel open(final Consumer<Channel> setup) {
    final var future =
        yamux.newStream(
            new ChannelInitializer<Channel>() {
              @Override
              protected void initChannel(final Channel ch) {
                ch.pipeline().addLast(recorder(ch));
                setup.accept(ch);
              }
            });
    return future.getNow();
  }

  /** Feeds bytes as the remote would send them, then runs the pending tasks. */
  void feed(final ByteBuf... bufs) {
    conn.writeInbound((Object[]) bufs);
    conn.runPendingTasks();
  }

  void feed(final YamuxFrame frame) {
    feed(frame.encode(UnpooledByteBufAllocator.DEFAULT));
  }

  /** Every frame the session wrote since the last call, parsed. */
  List<Sent> sent() {
    conn.runPendingTasks();
    final ByteBuf all = Unpooled.buffer();
    Object msg;
    while ((msg = conn.readOutbound()) != null) {
      final ByteBuf buf = (ByteBuf) msg;
      all.writeBytes(buf);
      buf.release();
    }
    final List<Sent> frames = new ArrayList<>();
    while (all.readableBytes() >= YamuxFrame.HEADER_LENGTH) {
      all.readUnsignedByte();
      final YamuxFrameType type = YamuxFrameType.fromCode(all.readUnsignedByte());
      final YamuxFrame header =
          new YamuxFrame(type, all.readUnsignedShort(), all.readInt(), all.readUnsignedInt());
      byte[] payload = new byte[0];
      if (type == YamuxFrameType.DATA) {
        payload = new byte[(int) header.length()];
        all.readBytes(payload);
      }
      frames.add(new Sent(header, payload));
    }
    if (all.isReadable()) {
      throw new AssertionError("partial frame written: " + all.readableBytes() + " bytes");
    }
    all.release();
    return frames;
  }

  /** Closes the connection and releases everything still queued in it. */
  void close() {
    conn.runPendingTasks();
    conn.close();
    conn.runPendingTasks();
    conn.releaseOutbound();
    conn.releaseInbound();
  }

  /** Only the headers of {@link #sent()}. */
  List<YamuxFrame> sentHeaders() {
    return sent().stream().map(Sent::header).toList();
  }

  static ByteBuf data(final int flags, final int streamId, final byte[] payload) {
    final ByteBuf buf = Unpooled.buffer(YamuxFrame.HEADER_LENGTH + payload.length);
    YamuxFrame.writeHeader(buf, YamuxFrameType.DATA, flags, streamId, payload.length);
    buf.writeBytes(payload);
    return buf;
  }

  static ByteBuf frame(final YamuxFrame frame) {
    return frame.encode(UnpooledByteBufAllocator.DEFAULT);
  }

  static byte[] bytes(final String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  static byte[] pattern(final int length, final int seed) {
    final byte[] out = new byte[length];
    for (int i = 0; i < length; i++) {
      out[i] = (byte) (i * 31 + seed);
    }
    return out;
  }
}
