package io.relaypinner.libp2p.security.noise;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.UnpooledDirectByteBuf;
import io.netty.buffer.UnpooledHeapByteBuf;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Supplier;

/** Helpers for the Noise tests: leak tracking, framing, and two channels wired back to back. */
final class NoiseTestSupport {
  private NoiseTestSupport() {}

  /**
   * An unpooled allocator that remembers every buffer it hands out, so a test can assert that all
   * were released on every path (paranoid leak detection only reports at GC time, in the log).
   */
  static final class TrackingAllocator extends AbstractByteBufAllocator {
    // Concurrent: the LocalChannel test allocates from two event loops.
    private final Queue<ByteBuf> buffers = new ConcurrentLinkedQueue<>();

    TrackingAllocator(final boolean preferDirect) {
      super(preferDirect);
    }

    @Override
    protected ByteBuf newHeapBuffer(final int initialCapacity, final int maxCapacity) {
      return track(new UnpooledHeapByteBuf(this, initialCapacity, maxCapacity));
    }

    @Override
    protected ByteBuf newDirectBuffer(final int initialCapacity, final int maxCapacity) {
      return track(new UnpooledDirectByteBuf(this, initialCapacity, maxCapacity));
    }

    @Override
    public boolean isDirectBufferPooled() {
      return false;
    }

    private ByteBuf track(final ByteBuf buf) {
      buffers.add(buf);
      return buf;
    }

    ByteBuf of(final byte[] bytes) {
      return buffer(bytes.length).writeBytes(bytes);
    }

    int allocated() {
      return buffers.size();
    }

    void assertAllReleased() {
      final List<String> leaked = new ArrayList<>();
      for (final ByteBuf buf : buffers) {
        if (buf.refCnt() != 0) {
          leaked.add(buf + " refCnt=" + buf.refCnt());
        }
      }
      assertThat(leaked).as("unreleased buffers").isEmpty();
    }
  }

  /** Records user events and passes everything on. */
  static final class EventRecorder extends ChannelInboundHandlerAdapter {
    final List<Object> events = new ArrayList<>();

    @Override
    public void userEventTriggered(final ChannelHandlerContext ctx, final Object evt) {
      events.add(evt);
      ctx.fireUserEventTriggered(evt);
    }
  }

  /** An active embedded channel using {@code alloc}, with {@code handlers} added afterwards. */
  static EmbeddedChannel channel(final TrackingAllocator alloc, final ChannelHandler... handlers) {
    final EmbeddedChannel channel = new EmbeddedChannel();
    channel.config().setAllocator(alloc);
    channel.pipeline().addLast(handlers);
    return channel;
  }

  /** {@code uint16 BE length || message}. */
  static byte[] frame(final byte[] message) {
    final byte[] out = new byte[2 + message.length];
    out[0] = (byte) (message.length >>> 8);
    out[1] = (byte) message.length;
    System.arraycopy(message, 0, out, 2, message.length);
    return out;
  }

  /** Reads every outbound buffer of {@code channel} into one array and releases them. */
  static byte[] drainOutbound(final EmbeddedChannel channel) {
    final List<byte[]> parts = new ArrayList<>();
    int total = 0;
    for (Object msg = channel.readOutbound(); msg != null; msg = channel.readOutbound()) {
      final ByteBuf buf = (ByteBuf) msg;
      try {
        final byte[] bytes = ByteBufUtil.getBytes(buf);
        parts.add(bytes);
        total += bytes.length;
      } finally {
        buf.release();
      }
    }
    final byte[] out = new byte[total];
    int offset = 0;
    for (final byte[] part : parts) {
      System.arraycopy(part, 0, out, offset, part.length);
      offset += part.length;
    }
    return out;
  }

  /** Reads every inbound buffer of {@code channel} into one array and releases them. */
  static byte[] drainInbound(final EmbeddedChannel channel) {
    final List<byte[]> parts = new ArrayList<>();
    int total = 0;
    for (Object msg = channel.readInbound(); msg != null; msg = channel.readInbound()) {
      final ByteBuf buf = (ByteBuf) msg;
      try {
        final byte[] bytes = ByteBufUtil.getBytes(buf);
        parts.add(bytes);
        total += bytes.length;
      } finally {
        buf.release();
      }
    }
    final byte[] out = new byte[total];
    int offset = 0;
    for (final byte[] part : parts) {
      System.arraycopy(part, 0, out, offset, part.length);
      offset += part.length;
    }
    return out;
  }

  /** Splits concatenated {@code uint16 || message} frames into the messages. */
  static List<byte[]> unframe(final byte[] frames) {
    final List<byte[]> out = new ArrayList<>();
    int offset = 0;
    while (offset < frames.length) {
      final int length = ((frames[offset] & 0xff) << 8) | (frames[offset + 1] & 0xff);
      final byte[] message = new byte[length];
      System.arraycopy(frames, offset + 2, message, 0, length);
      out.add(message);
      offset += 2 + length;
    }
    return out;
  }

  /** A key supplier that yields {@code key} once and fails if asked again. */
  static Supplier<X25519KeyPair> once(final X25519KeyPair key) {
    final boolean[] used = {false};
    return () -> {
      if (used[0]) {
        throw new AssertionError("ephemeral key requested twice");
      }
      used[0] = true;
      return key;
    };
  }

  /** Two embedded channels whose outbound bytes are delivered to each other on {@link #pump()}. */
  static final class Link {
    final EmbeddedChannel initiator;
    final EmbeddedChannel responder;

    Link(final EmbeddedChannel initiator, final EmbeddedChannel responder) {
      this.initiator = initiator;
      this.responder = responder;
    }

    /** Delivers until neither side has anything left to send. */
    void pump() {
      boolean moved;
      do {
        moved = transfer(initiator, responder) | transfer(responder, initiator);
      } while (moved);
    }

    private static boolean transfer(final EmbeddedChannel from, final EmbeddedChannel to) {
      boolean moved = false;
      for (Object msg = from.readOutbound(); msg != null; msg = from.readOutbound()) {
        moved = true;
        if (to.isOpen()) {
          to.writeInbound(msg);
        } else {
          ReferenceCountUtil.release(msg);
        }
      }
      return moved;
    }
  }
}
